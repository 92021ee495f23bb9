"""Compare the summaries of all ranks and decide whether something is wrong.

Pure functions over JSON-ready dicts, so they are tested without processes. A summary is::

    {"r": rank, "st": "run" | "fin" | "off" | "failed", "hb": beat,
     "g": {group: {"ranks": [...] | None, "n": issued, "w": [seq, seconds] | None,
                   "e": [[seq, fingerprint, words, extras, site], ...],
                   "c": [[seq, rolling digest], ...]}},
     "ps": {model: {"r": replica ranks, "d": [[optimizer step, parameter digest], ...],
                    "f": [optimizer step, digest] at the end of the run | None}},
     "at": None | {"for": s without a recorded collective, "dist": s inside one unrecorded
                   communication call, "call": its name, "stack": [user frames, innermost last]}}
"""

from __future__ import annotations

from typing import Any

Summary = dict[str, Any]
Verdict = dict[str, Any]
Group = dict[str, Any]  # one group in a summary
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


def _view(summaries: dict[int, Summary], name: str, members: list[int]) -> dict[int, Group]:
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


def _entry(g: Group, seq: int) -> list[Any] | None:
    entries: list[list[Any]] = g["e"]
    for e in entries:
        if e[0] == seq:
            return e
    return None


def _call(rank: int, g: Group, seq: int) -> dict[str, Any]:
    e = _entry(g, seq)
    if e is None:
        return {"rank": rank, "seq": seq, "op": "?", "extra": "", "site": "?"}
    return {"rank": rank, "seq": seq, "op": e[2], "extra": e[3], "site": e[4]}


def mismatch(name: str, view: dict[int, Group]) -> Verdict | None:
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


def _waiting(view: dict[int, Group]) -> list[tuple[int, int]]:
    return sorted((g["w"][0], r) for r, g in view.items() if g["w"] is not None)


def _stall(name: str, view: dict[int, Group]) -> tuple[int, list[Verdict], list[int]] | None:
    """The oldest wait that a peer has not reached: (waiting rank, waiters, laggers)."""
    waiting = _waiting(view)
    for seq, r in waiting:
        laggers = [b for b, g in view.items() if b != r and g["n"] <= seq]
        if laggers:
            waiters = [
                _call(a, view[a], s) | {"age": view[a]["w"][1]} for s, a in waiting if s >= seq
            ]
            return r, waiters, laggers
    return None


def _behind(view: dict[int, Group], laggers: list[int]) -> list[dict[str, Any]]:
    return [_call(b, view[b], view[b]["n"] - 1) | {"count": view[b]["n"]} for b in laggers]


def stalled(
    name: str, view: dict[int, Group], states: dict[int, str], hang_timeout: float
) -> Verdict | None:
    """A rank blocked in a collective that a peer has not issued: finished, or too slow."""
    found = _stall(name, view)
    if found is None:
        return None
    r, waiters, laggers = found
    done = [b for b in laggers if states.get(b) == "fin"]
    if done:
        behind = _behind(view, done)
        return {"kind": "finished", "group": name, "done": behind, "waiting": waiters}
    if view[r]["w"][1] > hang_timeout:
        return {
            "kind": "hang",
            "group": name,
            "waiting": waiters,
            "lagging": _behind(view, laggers),
            "reps": laggers[:4],
            "timeout": hang_timeout,
        }
    return None


def slow(summaries: dict[int, Summary], world_size: int, warn_after: float) -> Verdict | None:
    """A wait longer than ``warn_after`` on a rank that a live peer has not reached: a warning,
    with the laggers' own stacks as published (they may be busy, e.g. evaluating)."""
    for name, members in _groups(summaries, world_size).items():
        view = _view(summaries, name, members)
        found = _stall(name, view)
        if found is None or view[found[0]]["w"][1] <= warn_after:
            continue
        r, waiters, laggers = found
        behind = _behind(view, laggers)
        for lag in behind:
            lag["stack"] = (summaries[lag["rank"]].get("at") or {}).get("stack", [])
        return {
            "kind": "slow",
            "group": name,
            "seq": view[r]["w"][0],
            "waiting": waiters,
            "lagging": behind,
        }
    return None


def vanished(
    name: str, view: dict[int, Group], states: dict[int, str], dead: set[int]
) -> Verdict | None:
    """A process that ended without finishing its script, once it matters: a peer waits in a
    recorded collective, or it died inside one itself."""
    gone = sorted(r for r in view if r in dead and states.get(r) != "fin")
    if not gone:
        return None
    live_waits = any(g["w"] is not None for r, g in view.items() if r not in dead)
    for r in gone:
        if live_waits or view[r]["w"] is not None:
            g = view[r]
            found: Verdict = {"kind": "vanished", "rank": r, "count": g["n"], "group": name}
            if g["n"]:
                found["last"] = _call(r, g, g["n"] - 1)
            return found
    return None


def uneven_finish(name: str, view: dict[int, Group], states: dict[int, str]) -> Verdict | None:
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


def analyze(
    summaries: dict[int, Summary],
    world_size: int,
    hang_timeout: float,
    dead: set[int] | frozenset[int] = frozenset(),
) -> Verdict | None:
    """The first problem found across all ranks, ``{"kind": "ok"}`` when all finished cleanly.

    ``dead`` are ranks whose process is known to be gone. Evidence comes first: a mismatch in the
    published call shapes outranks a vanished process (a backend may abort on a mismatch).
    """
    states = {r: s.get("st", "run") for r, s in summaries.items()}
    groups = _groups(summaries, world_size)
    views = {name: _view(summaries, name, members) for name, members in groups.items()}
    for name, view in views.items():
        found = mismatch(name, view)
        if found:
            return found
    for name, view in views.items():
        found = vanished(name, view, states, set(dead))
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
    finished = all(st in ("fin", "off") or r in dead for r, st in states.items())
    if len(summaries) == world_size and finished and "fin" in states.values():
        return {"kind": "ok"}
    return None


def _waits(s: Summary) -> bool:
    return any(g.get("w") is not None for g in s.get("g", {}).values())


def departure(
    summaries: dict[int, Summary],
    fresh: set[int],
    me: int,
    world_size: int,
    gone: set[int],
    stranded_after: float,
    leave_after: float,
) -> str | Verdict:
    """What a rank that finished its script does next: ``"wait"`` while a peer makes recorded
    progress or waits in a recorded collective; ``"leave"`` (as it would without the guard) once
    every running peer has gone ``leave_after`` s without a recorded collective; a ``stranded``
    verdict when every running peer sits ``stranded_after`` s inside a communication call the
    guard does not record (nobody is left to answer it). ``fresh``: ranks that published since
    this rank finished (older summaries are not evidence); ``gone``: peers dead or silent.
    """
    running = [
        r
        for r in range(world_size)
        if r != me and r not in gone and summaries.get(r, {}).get("st", "run") == "run"
    ]
    if not running:
        return "leave"
    places: dict[int, dict[str, Any]] = {}
    for r in running:
        s = summaries.get(r)
        if s is None or r not in fresh or _waits(s) or not s.get("at"):
            return "wait"
        places[r] = s["at"]
    if all(at["dist"] >= stranded_after for at in places.values()):
        mine = summaries.get(me, {}).get("g", {})
        counts = {name: g["n"] for name, g in mine.items()}
        last = None
        world = mine.get("WORLD")
        if world and world["n"]:
            last = _call(me, world, world["n"] - 1)
        return {
            "kind": "stranded",
            "done": [{"rank": me, "counts": counts, "last": last}],
            "blocked": [
                {"rank": r, "call": at["call"], "stack": at["stack"][-3:], "for": at["dist"]}
                for r, at in sorted(places.items())
            ],
        }
    if all(at["for"] >= leave_after for at in places.values()):
        return "leave"
    return "wait"
