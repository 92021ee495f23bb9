"""Turn a verdict into the ``[guards]`` lines every rank prints."""

from __future__ import annotations

import sys
from typing import TextIO

from ..protocol.exchange import Detail
from ..protocol.messages import (
    Call,
    Diverged,
    Exited,
    Failed,
    Finished,
    Hang,
    Mismatch,
    Params,
    Slow,
    Stranded,
    Vanished,
    Verdict,
)

PREFIX = "[guards]"
EXIT_STATUS = 70
_LIST_AT_MOST = 6


def stream() -> TextIO:
    """The process's real stderr: torch swaps ``sys.stderr`` while its excepthook runs."""
    return sys.__stderr__ or sys.stderr


def ranks_text(ranks: list[int]) -> str:
    """``rank 3`` or ``ranks 0, 1, 2``."""
    ranks = sorted(ranks)
    if len(ranks) == 1:
        return f"rank {ranks[0]}"
    if len(ranks) > _LIST_AT_MOST:
        return f"ranks {', '.join(map(str, ranks[:_LIST_AT_MOST]))}, ... ({len(ranks)} ranks)"
    return "ranks " + ", ".join(map(str, ranks))


def call_text(call: Call) -> str:
    """``all_reduce float32[16] at train.py:10 (src=0)``."""
    extra = f" ({call.extra})" if call.extra else ""
    return f"{call.op} at {call.site}{extra}"


def _sides(sides: list[list[Call]]) -> list[str]:
    out: list[str] = []
    for side in sides:
        if len(side) <= _LIST_AT_MOST:
            out.extend(f"  rank {c.rank} {call_text(c)}" for c in side)
        else:
            out.append(f"  {ranks_text([c.rank for c in side])} {call_text(side[0])}")
    return out


def _waiters(waiting: list[Call]) -> list[str]:
    shown = waiting[:_LIST_AT_MOST]
    out = [
        f"  rank {w.rank} waits in {call_text(w)} (collective #{w.seq + 1}, {w.age or 0.0:.1f} s)"
        for w in shown
    ]
    if len(waiting) > len(shown):
        out.append(f"  ... and {len(waiting) - len(shown)} more ranks waiting")
    return out


def _params(verdict: Params, details: dict[int, Detail]) -> list[str]:
    sides = verdict.sides
    out = [f"parameters or buffers differ across ranks after optimizer step {verdict.step}:"]
    base = details.get(sides[0][0])
    if not isinstance(base, dict):
        return [*out, "  " + "; ".join(ranks_text(s) for s in sides) + " hold different values"]
    names: dict[str, list[int]] = {}
    for side in sides[1:]:
        other = details.get(side[0])
        if not isinstance(other, dict):
            continue
        for name, value in other.items():
            if base.get(name) != value:
                names.setdefault(name, []).extend(side)
    for name, ranks in list(names.items())[:20]:
        out.append(f"  {name} differs on {ranks_text(ranks)} from {ranks_text(sides[0])}")
    if len(names) > 20:
        out.append(f"  ... and {len(names) - 20} more")
    out.append(
        "replicas must stay identical: look for rank-dependent updates, randomness seeded per "
        "rank, or a rank that skipped a step"
    )
    return out


_HIDDEN_CALLS = {
    "_distributed_broadcast_coalesced": "DDP's buffer broadcast in forward",
    "_sync_module_states": "DDP's constructor (parameter broadcast)",
    "_verify_param_shape_across_processes": "DDP's constructor (shape check)",
}


def _stranded(verdict: Stranded) -> list[str]:
    blocked = verdict.blocked
    out = []
    for d in verdict.done:
        counts = ", ".join(f"{n} on {g}" for g, n in d.counts.items()) or "no collectives"
        last = f", last: {call_text(d.last)}" if d.last else ""
        out.append(
            f"rank {d.rank} finished its script {d.script} (after {counts}{last}) "
            f"while {ranks_text([b.rank for b in blocked])} "
            f"{'is' if len(blocked) == 1 else 'are'} still running:"
        )
    for b in blocked:
        stack = b.stack
        out.append(f"  rank {b.rank} is at {stack[-1] if stack else 'an unknown line'}")
        out.extend(f"    called from {line}" for line in stack[-3:-1][::-1])
        call = _HIDDEN_CALLS.get(b.call, f"torch's {b.call}")
        out.append(
            f"    blocked for {b.seconds:.1f} s inside {call}, a communication call the guard "
            "does not record"
        )
    out.append(
        "no rank is left to answer it: every rank must issue the same point-to-point calls "
        "(send/recv) and the same DDP forward passes (DDP broadcasts buffers in forward; "
        "evaluate on one rank through model.module)"
    )
    return out


def warning(verdict: Slow, timeout: float) -> list[str]:
    """The lines of a ``slow`` warning: the job goes on."""
    group = verdict.group
    waiting = verdict.waiting
    out = [
        f"warning: {ranks_text([w.rank for w in waiting])} "
        f"{'waits' if len(waiting) == 1 else 'wait'} on {group} for a peer that has not reached "
        "the collective yet:",
        *_waiters(waiting),
    ]
    for lag in verdict.lagging:
        out.append(
            f"  rank {lag.rank} has issued {lag.count} collectives on {group} "
            f"(last: {call_text(lag)}); it is now at:"
        )
        stack = lag.stack or ["(not published: it is issuing collectives on other groups)"]
        out.extend(f"    {line}" for line in stack)
    out.append(
        f"  the job goes on; the guard stops it if the wait reaches {timeout:g} s "
        "(GUARDS_HANG_TIMEOUT; default: the process group's timeout)"
    )
    return [f"{PREFIX} {line}" for line in out]


def _finished(verdict: Finished) -> list[str]:
    group = verdict.group
    out = [
        f"rank {d.rank} finished after {d.count} collectives on {group} (last: {call_text(d)})"
        for d in verdict.done
    ]
    out.extend(f"  rank {a.rank} issued {a.count} (last: {call_text(a)})" for a in verdict.ahead)
    if verdict.waiting:
        out.append("while other ranks wait for it:")
    out.extend(_waiters(verdict.waiting))
    out.append(
        "every rank must issue the same number of collectives: give every rank the same "
        "number of batches (DistributedSampler, drop_last, or the Join context manager)"
    )
    return out


def _hang(verdict: Hang, details: dict[int, Detail]) -> list[str]:
    group = verdict.group
    out = [
        f"hang on {group}: a rank waits more than {verdict.timeout:g} s "
        "(GUARDS_HANG_TIMEOUT) in a collective that a peer has not reached",
        *_waiters(verdict.waiting),
    ]
    for lag in verdict.lagging:
        out.append(
            f"  rank {lag.rank} has issued {lag.count} collectives on {group} "
            f"(last: {call_text(lag)}); it is now at:"
        )
        stack = details.get(lag.rank)
        if isinstance(stack, list) and stack:
            out.extend(f"    {line}" for line in stack)
        else:
            out.append("    (no answer: the process is stuck holding the GIL, or gone)")
    return out


def describe(verdict: Verdict, details: dict[int, Detail]) -> list[str]:
    """The body of a report (without the prefix)."""
    if isinstance(verdict, Diverged):
        return [
            f"collective sequences on {verdict.group} diverged before collective "
            f"#{verdict.seq + 2}; latest calls:",
            *_sides(verdict.sides),
        ]
    if isinstance(verdict, Mismatch):
        return [
            f"collective mismatch on {verdict.group} at collective #{verdict.seq + 1}: "
            "ranks issued different collectives at the same position",
            *_sides(verdict.sides),
            "collectives are matched by position, not by name: every rank must issue the same "
            "collectives, with the same shapes, in the same order",
        ]
    if isinstance(verdict, Finished):
        return _finished(verdict)
    if isinstance(verdict, Hang):
        return _hang(verdict, details)
    if isinstance(verdict, Vanished):
        where = f" (last: {call_text(verdict.last)})" if verdict.last else ""
        return [
            f"rank {verdict.rank} vanished: its process ended without finishing its script "
            f"after {verdict.count} collectives on {verdict.group} as last published{where}",
            "  it was killed (SIGKILL, the OOM killer) or aborted by the backend: see that "
            "rank's own stderr",
        ]
    if isinstance(verdict, Stranded):
        return _stranded(verdict)
    if isinstance(verdict, Failed):
        return [
            f"rank {verdict.rank} failed: {verdict.type}: {verdict.message} at {verdict.site}",
            *("  " + line for line in verdict.memory),
        ]
    if isinstance(verdict, Exited):
        return [
            f"rank {verdict.rank} exited with status {verdict.status} at {verdict.site} "
            "while the job was running"
        ]
    if isinstance(verdict, Params):
        return _params(verdict, details)
    return [f"internal verdict {verdict.kind.value}"]


def render(
    verdict: Verdict,
    details: dict[int, Detail],
    rank: int,
    here: str | None,
    status: int = EXIT_STATUS,
    *,
    after: int | None = None,
    torchrun: bool = False,
) -> list[str]:
    """All lines of the report on ``rank``, prefixed. ``after``: the failed rank this one
    leaves after; under torchrun, torchrun then stops it and names ``after`` as the root cause."""
    body = describe(verdict, details)
    if here:
        body.append(f"this is rank {rank}: {here}")
    if after is None:
        body.append(f"rank {rank} stops with exit status {status}")
    elif torchrun:
        body.append(
            f"rank {rank} stops after rank {after} has ended, so that torchrun names "
            f"rank {after} as the root cause"
        )
    else:
        body.append(f"rank {rank} stops with exit status {status} after rank {after} has ended")
    return [f"{PREFIX} {line}" for line in body]
