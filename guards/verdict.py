"""Compare the summaries of all ranks and decide whether something is wrong.

Pure functions over JSON-ready dicts, so they are tested without processes. A summary is::

    {"r": rank, "st": "run" | "fin" | "off", "hb": beat,
     "g": {group: {"ranks": [...] | None, "n": issued, "w": [seq, seconds] | None,
                   "e": [[seq, fingerprint, words, extras, site], ...],
                   "c": [[seq, rolling digest], ...]}},
     "ps": {model: {"r": replica ranks, "d": [[optimizer step, parameter digest], ...],
                    "f": [optimizer step, digest] at the end of the run | None}}}
"""

from __future__ import annotations

from typing import Any

Summary = dict[str, Any]
Verdict = dict[str, Any]
_EMPTY: dict[str, Any] = {"n": 0, "w": None, "e": [], "c": []}


def _groups(summaries: dict[int, Summary], world_size: int) -> dict[str, list[int]]:
    """Group name to member ranks; ``ranks`` is omitted (None) for the default group."""
    found: dict[str, list[int]] = {}
    for s in summaries.values():
        for name, g in s.get("g", {}).items():
            if name not in found:
                ranks = g.get("ranks")
                found[name] = list(range(world_size)) if ranks is None else ranks
    return found


def _view(summaries: dict[int, Summary], name: str, members: list[int]) -> dict[int, dict]:
    """Each member's state on a group; members without a live summary are left out."""
    out = {}
    for r in members:
        s = summaries.get(r)
        if s is not None and s.get("st") != "off":
            out[r] = s.get("g", {}).get(name, _EMPTY)
    return out


def _by_key(items: dict[int, Any]) -> list[list[int]]:
    """Ranks grouped by value; the largest group (the majority) first."""
    sides: dict[Any, list[int]] = {}
    for r, v in sorted(items.items()):
        sides.setdefault(v, []).append(r)
    return sorted(sides.values(), key=lambda ranks: (-len(ranks), ranks[0]))


def _entry(g: dict, seq: int) -> list | None:
    for e in g["e"]:
        if e[0] == seq:
            return e
    return None


def _call(rank: int, g: dict, seq: int) -> dict[str, Any]:
    e = _entry(g, seq)
    if e is None:
        return {"rank": rank, "seq": seq, "op": "?", "extra": "", "site": "?"}
    return {"rank": rank, "seq": seq, "op": e[2], "extra": e[3], "site": e[4]}


def mismatch(name: str, view: dict[int, dict]) -> Verdict | None:
    """Different fingerprints at the same sequence number of a group."""
    if len(view) < 2:
        return None
    windows = {r: {e[0]: e for e in g["e"]} for r, g in view.items()}
    common = set.intersection(*(set(w) for w in windows.values()))
    for seq in sorted(common):
        fps = {r: w[seq][1] for r, w in windows.items()}
        if len(set(fps.values())) > 1:
            sides = [[_call(r, view[r], seq) for r in ranks] for ranks in _by_key(fps)]
            return {"kind": "mismatch", "group": name, "seq": seq, "sides": sides}
    digests: dict[int, dict[int, int]] = {}
    for r, g in view.items():
        for seq, digest in g["c"]:
            digests.setdefault(seq, {})[r] = digest
    full = [seq for seq, d in digests.items() if len(d) == len(view)]
    if full:
        seq = max(full)
        if len(set(digests[seq].values())) > 1:
            sides = [
                [_call(r, view[r], view[r]["n"] - 1) for r in ranks]
                for ranks in _by_key(digests[seq])
            ]
            return {"kind": "diverged", "group": name, "seq": seq, "sides": sides}
    return None


def stalled(
    name: str, view: dict[int, dict], states: dict[int, str], hang_timeout: float
) -> Verdict | None:
    """A rank blocked in a collective that a peer has not issued: finished, or too slow."""
    waiting = sorted((g["w"][0], r) for r, g in view.items() if g["w"] is not None)
    for seq, r in waiting:
        laggers = [b for b, g in view.items() if b != r and g["n"] <= seq]
        if not laggers:
            continue
        waiters = [_call(a, view[a], s) | {"age": view[a]["w"][1]} for s, a in waiting if s >= seq]
        behind = [_call(b, view[b], view[b]["n"] - 1) | {"count": view[b]["n"]} for b in laggers]
        done = [b for b in laggers if states.get(b) == "fin"]
        if done:
            behind = [x for x in behind if x["rank"] in done]
            return {"kind": "finished", "group": name, "done": behind, "waiting": waiters}
        if view[r]["w"][1] > hang_timeout:
            return {
                "kind": "hang",
                "group": name,
                "waiting": waiters,
                "lagging": behind,
                "reps": laggers[:4],
                "timeout": hang_timeout,
            }
    return None


def uneven_finish(name: str, view: dict[int, dict], states: dict[int, str]) -> Verdict | None:
    """All members finished, but after different numbers of collectives."""
    if not view or any(states.get(r) != "fin" for r in view):
        return None
    counts = {r: g["n"] for r, g in view.items()}
    if len(set(counts.values())) < 2:
        return None
    low = min(counts.values())
    done = [_call(r, view[r], c - 1) | {"count": c} for r, c in counts.items() if c == low]
    ahead = [_call(r, view[r], c - 1) | {"count": c} for r, c in counts.items() if c != low]
    return {"kind": "finished", "group": name, "done": done, "waiting": [], "ahead": ahead}


def _model_params(key: str, holders: dict[int, dict[str, Any]]) -> Verdict | None:
    finals = {r: m["f"] for r, m in holders.items() if m.get("f")}
    if len(finals) == len(holders):
        # digests only: under Join, replicas end equal after different numbers of steps
        sides = _by_key({r: f[1] for r, f in finals.items()})
        if len(sides) > 1:
            step = finals[sides[0][0]][0]
            return _params_verdict(key, step, True, sides)
    per_step: dict[int, dict[int, int]] = {}
    for r, m in holders.items():
        for step, digest in m.get("d") or []:
            per_step.setdefault(step, {})[r] = digest
    full = [step for step, d in per_step.items() if len(d) == len(holders)]
    if not full:
        return None
    step = max(full)
    sides = _by_key(per_step[step])
    return _params_verdict(key, step, False, sides) if len(sides) > 1 else None


def _params_verdict(key: str, step: int, final: bool, sides: list[list[int]]) -> Verdict:
    reps = [s[0] for s in sides][:4]
    return {
        "kind": "params",
        "model": key,
        "step": step,
        "final": final,
        "sides": sides,
        "reps": reps,
    }


def params(summaries: dict[int, Summary]) -> Verdict | None:
    """Replicas of a DDP model whose parameter digests differ.

    Each model (``ps`` key) is compared among the ranks of its process group that published it:
    at its latest check every one of them has made, and at the end of the run. A rank without
    the model (no DDP, another pipeline stage, another group) is not compared.
    """
    live = {r: s for r, s in summaries.items() if s.get("st") != "off"}
    models: dict[str, list[int]] = {}
    for s in live.values():
        for key, model in (s.get("ps") or {}).items():
            models.setdefault(key, model.get("r") or [])
    for key, ranks in sorted(models.items()):
        holders = {
            r: live[r]["ps"][key] for r in ranks if r in live and key in (live[r].get("ps") or {})
        }
        if len(holders) > 1:
            found = _model_params(key, holders)
            if found:
                return found
    return None


def analyze(summaries: dict[int, Summary], world_size: int, hang_timeout: float) -> Verdict | None:
    """The first problem found across all ranks, ``{"kind": "ok"}`` when all finished cleanly."""
    states = {r: s.get("st", "run") for r, s in summaries.items()}
    groups = _groups(summaries, world_size)
    views = {name: _view(summaries, name, members) for name, members in groups.items()}
    for name, view in views.items():
        found = mismatch(name, view)
        if found:
            return found
    for name, view in views.items():
        found = stalled(name, view, states, hang_timeout)
        if found:
            return found
    found = params(summaries)
    if found:
        return found
    for name, view in views.items():
        found = uneven_finish(name, view, states)
        if found:
            return found
    finished = all(st in ("fin", "off") for st in states.values())
    if len(summaries) == world_size and finished and "fin" in states.values():
        return {"kind": "ok"}
    return None
