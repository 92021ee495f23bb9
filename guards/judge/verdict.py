"""Compare the summaries of all ranks and decide whether something is wrong.

Pure functions over ``protocol`` messages, so they are tested without processes.
"""

from __future__ import annotations

from collections.abc import Hashable

from ..protocol.messages import (
    Blocked,
    Call,
    Diverged,
    Finished,
    Finisher,
    GroupSummary,
    Hang,
    Mismatch,
    ModelSummary,
    Ok,
    Params,
    Place,
    Slow,
    State,
    Stranded,
    Summary,
    Vanished,
    Verdict,
)

LEAVE = "leave"
WAIT = "wait"


def _groups(summaries: dict[int, Summary], world_size: int) -> dict[str, list[int]]:
    """Group name to member ranks (every rank for the default group)."""
    found: dict[str, list[int]] = {}
    for s in summaries.values():
        for name, g in s.groups.items():
            if name not in found:
                found[name] = list(range(world_size)) if g.ranks is None else g.ranks
    return found


def _view(summaries: dict[int, Summary], name: str, members: list[int]) -> dict[int, GroupSummary]:
    """Each member's state on a group; members without a live summary are left out."""
    out = {}
    for r in members:
        s = summaries.get(r)
        if s is not None and s.state is not State.OFF:
            out[r] = s.groups.get(name) or GroupSummary(None)
    return out


def _by_key(items: dict[int, Hashable]) -> list[list[int]]:
    """Ranks grouped by value; the largest group (the majority) first."""
    sides: dict[Hashable, list[int]] = {}
    for r, v in sorted(items.items()):
        sides.setdefault(v, []).append(r)
    return sorted(sides.values(), key=lambda ranks: (-len(ranks), ranks[0]))


def _call(rank: int, g: GroupSummary, seq: int) -> Call:
    e = g.entry(seq)
    if e is None:
        return Call(rank, seq)
    return Call(rank, seq, e.op, e.extra, e.site)


def _last(rank: int, g: GroupSummary) -> Call:
    """The rank's latest call on the group, with how many it issued."""
    call = _call(rank, g, g.issued - 1)
    call.count = g.issued
    return call


def mismatch(name: str, view: dict[int, GroupSummary]) -> Mismatch | None:
    """Different fingerprints at the same sequence number of a group."""
    if len(view) < 2:
        return None
    windows = {r: {e.seq: e for e in g.entries} for r, g in view.items()}
    common = set.intersection(*(set(w) for w in windows.values()))
    for seq in sorted(common):
        fps = {r: w[seq].fingerprint for r, w in windows.items()}
        if len(set(fps.values())) > 1:
            sides = [[_call(r, view[r], seq) for r in ranks] for ranks in _by_key(dict(fps))]
            return Mismatch(name, seq, sides)
    digests: dict[int, dict[int, int]] = {}
    for r, g in view.items():
        for seq, digest in g.checkpoints:
            digests.setdefault(seq, {})[r] = digest
    full = [seq for seq, d in digests.items() if len(d) == len(view)]
    if full:
        seq = max(full)
        if len(set(digests[seq].values())) > 1:
            sides = [
                [_call(r, view[r], view[r].issued - 1) for r in ranks]
                for ranks in _by_key(dict(digests[seq]))
            ]
            return Diverged(name, seq, sides)
    return None


def _stall(view: dict[int, GroupSummary]) -> tuple[int, list[Call], list[int]] | None:
    """The oldest wait that a peer has not reached: (waiting rank, waiters, laggers)."""
    waiting = sorted((g.wait.seq, r) for r, g in view.items() if g.wait is not None)
    for seq, r in waiting:
        laggers = [b for b, g in view.items() if b != r and g.issued <= seq]
        if laggers:
            waiters = []
            for s, a in waiting:
                if s >= seq:
                    call = _call(a, view[a], s)
                    call.age = _age(view[a])
                    waiters.append(call)
            return r, waiters, laggers
    return None


def _age(g: GroupSummary) -> float:
    return g.wait.seconds if g.wait is not None else 0.0


def stalled(
    name: str, view: dict[int, GroupSummary], states: dict[int, State], hang_timeout: float
) -> Finished | Hang | None:
    """A rank blocked in a collective that a peer has not issued: finished, or too slow."""
    found = _stall(view)
    if found is None:
        return None
    r, waiters, laggers = found
    done = [b for b in laggers if states.get(b) is State.FIN]
    if done:
        return Finished(name, [_last(b, view[b]) for b in done], waiters)
    if _age(view[r]) > hang_timeout:
        lagging = [_last(b, view[b]) for b in laggers]
        return Hang(name, waiters, lagging, laggers[:4], hang_timeout)
    return None


def slow(summaries: dict[int, Summary], world_size: int, warn_after: float) -> Slow | None:
    """A wait longer than ``warn_after`` on a rank that a live peer has not reached: a warning,
    with the laggers' own stacks as published (they may be busy, e.g. evaluating)."""
    for name, members in _groups(summaries, world_size).items():
        view = _view(summaries, name, members)
        found = _stall(view)
        if found is None or _age(view[found[0]]) <= warn_after:
            continue
        r, waiters, laggers = found
        behind = [_last(b, view[b]) for b in laggers]
        for lag in behind:
            at = summaries[lag.rank].at
            lag.stack = at.stack if at is not None else []
        wait = view[r].wait
        return Slow(name, wait.seq if wait is not None else -1, waiters, behind)
    return None


def vanished(
    name: str, view: dict[int, GroupSummary], states: dict[int, State], dead: set[int]
) -> Vanished | None:
    """A process that ended without finishing its script, once it matters: a peer waits in a
    recorded collective, or it died inside one itself."""
    gone = sorted(r for r in view if r in dead and states.get(r) is not State.FIN)
    if not gone:
        return None
    live_waits = any(g.wait is not None for r, g in view.items() if r not in dead)
    for r in gone:
        g = view[r]
        if live_waits or g.wait is not None:
            last = _call(r, g, g.issued - 1) if g.issued else None
            return Vanished(r, g.issued, name, last)
    return None


def uneven_finish(
    name: str, view: dict[int, GroupSummary], states: dict[int, State]
) -> Finished | None:
    """All members finished, but after different numbers of collectives."""
    if not view or any(states.get(r) is not State.FIN for r in view):
        return None
    counts = {r: g.issued for r, g in view.items()}
    if len(set(counts.values())) < 2:
        return None
    low = min(counts.values())
    done = [_last(r, view[r]) for r, c in counts.items() if c == low]
    ahead = [_last(r, view[r]) for r, c in counts.items() if c != low]
    return Finished(name, done, [], ahead)


def _model_params(key: str, holders: dict[int, ModelSummary]) -> Params | None:
    finals = {r: m.final for r, m in holders.items() if m.final is not None}
    if len(finals) == len(holders):
        # digests only: under Join, replicas end equal after different numbers of steps
        sides = _by_key({r: f.digest for r, f in finals.items()})
        if len(sides) > 1:
            return _params_verdict(key, finals[sides[0][0]].step, True, sides)
    per_step: dict[int, dict[int, int]] = {}
    for r, m in holders.items():
        for step, digest in m.digests:
            per_step.setdefault(step, {})[r] = digest
    full = [step for step, d in per_step.items() if len(d) == len(holders)]
    if not full:
        return None
    step = max(full)
    sides = _by_key(dict(per_step[step]))
    return _params_verdict(key, step, False, sides) if len(sides) > 1 else None


def _params_verdict(key: str, step: int, final: bool, sides: list[list[int]]) -> Params:
    return Params(key, step, final, sides, [s[0] for s in sides][:4])


def params(summaries: dict[int, Summary]) -> Params | None:
    """Replicas of a model whose parameter digests differ.

    Each model is compared among the ranks of its process group that published it: at its
    latest check every one of them has made, and at the end of the run. A rank without the
    model (no DDP, another pipeline stage, another group) is not compared.
    """
    live = {r: s for r, s in summaries.items() if s.state is not State.OFF}
    models: dict[str, list[int]] = {}
    for s in live.values():
        for key, model in s.models.items():
            models.setdefault(key, model.ranks)
    for key, ranks in sorted(models.items()):
        holders = {r: live[r].models[key] for r in ranks if r in live and key in live[r].models}
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
    """The first problem found across all ranks, ``Ok()`` when all finished cleanly.

    ``dead`` are ranks whose process is known to be gone. Evidence comes first: a mismatch in the
    published call shapes outranks a vanished process (a backend may abort on a mismatch).
    """
    states = {r: s.state for r, s in summaries.items()}
    groups = _groups(summaries, world_size)
    views = {name: _view(summaries, name, members) for name, members in groups.items()}
    found: Verdict | None
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
    ended = (State.FIN, State.OFF)
    finished = all(st in ended or r in dead for r, st in states.items())
    if len(summaries) == world_size and finished and State.FIN in states.values():
        return Ok()
    return None


def departure(
    summaries: dict[int, Summary],
    fresh: set[int],
    me: int,
    world_size: int,
    gone: set[int],
    stranded_after: float,
    leave_after: float,
) -> str | Stranded:
    """What a rank that finished its script does next: ``WAIT`` while a peer makes recorded
    progress or waits in a recorded collective; ``LEAVE`` (as it would without the guard) once
    every running peer has gone ``leave_after`` s without a recorded collective; a ``Stranded``
    verdict when every running peer sits ``stranded_after`` s inside a communication call the
    guard does not record (nobody is left to answer it). ``fresh``: ranks that published since
    this rank finished (older summaries are not evidence); ``gone``: peers dead or silent.
    """
    running = [
        r
        for r in range(world_size)
        if r != me and r not in gone and _state(summaries, r) is State.RUN
    ]
    if not running:
        return LEAVE
    places: dict[int, Place] = {}
    for r in running:
        s = summaries.get(r)
        if s is None or r not in fresh or s.at is None:
            return WAIT
        if any(g.wait is not None for g in s.groups.values()):
            return WAIT
        places[r] = s.at
    if all(at.in_call >= stranded_after for at in places.values()):
        mine = summaries[me].groups if me in summaries else {}
        world = mine.get("WORLD")
        last = _call(me, world, world.issued - 1) if world and world.issued else None
        counts = {name: g.issued for name, g in mine.items()}
        blocked = [
            Blocked(r, at.call, at.stack[-3:], at.in_call) for r, at in sorted(places.items())
        ]
        return Stranded([Finisher(me, counts, last)], blocked)
    if all(at.idle >= leave_after for at in places.values()):
        return LEAVE
    return WAIT


def _state(summaries: dict[int, Summary], rank: int) -> State:
    s = summaries.get(rank)
    return s.state if s is not None else State.RUN
