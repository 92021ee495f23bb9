"""What ranks tell each other: one summary per rank, one verdict per job.

Plain typed values, built by the agent, read by the judge; ``wire`` turns them into the compact
text the c10d store holds, and back.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import ClassVar, NamedTuple


class State(enum.Enum):
    """Where a rank's script is."""

    RUN = "run"
    FIN = "fin"  # the script ended cleanly
    OFF = "off"  # the guard is off in this process: left out of every comparison
    FAILED = "failed"  # the script raised; the rank reports it itself


class Kind(enum.Enum):
    """What a verdict says."""

    OK = "ok"
    MISMATCH = "mismatch"
    DIVERGED = "diverged"
    FINISHED = "finished"
    HANG = "hang"
    SLOW = "slow"
    VANISHED = "vanished"
    STRANDED = "stranded"
    FAILED = "failed"
    EXITED = "exited"
    PARAMS = "params"


# --- summaries ---------------------------------------------------------------------------------
class Entry(NamedTuple):
    """One published collective of a group: its position, fingerprint and words."""

    seq: int
    fingerprint: int
    op: str
    extra: str
    site: str


class Wait(NamedTuple):
    """The oldest collective a rank is blocked in, and for how long."""

    seq: int
    seconds: float


class Checkpoint(NamedTuple):
    """The rolling digest of a group's collectives up to ``seq``."""

    seq: int
    digest: int


@dataclass
class GroupSummary:
    """One rank's collectives on one process group."""

    ranks: list[int] | None  # None: the default group (every rank)
    issued: int = 0
    wait: Wait | None = None
    entries: list[Entry] = field(default_factory=list)  # the latest, oldest first
    checkpoints: list[Checkpoint] = field(default_factory=list)

    def entry(self, seq: int) -> Entry | None:
        for e in self.entries:
            if e.seq == seq:
                return e
        return None


class Digest(NamedTuple):
    """A model's parameter digest after an optimizer step."""

    step: int
    digest: int


@dataclass
class ModelSummary:
    """One replicated model's parameter digests on one rank."""

    ranks: list[int]  # the replicas: ranks that hold the same model
    digests: list[Digest] = field(default_factory=list)
    final: Digest | None = None  # at the end of the run


@dataclass
class Place:
    """Where the main thread is while it issues no recorded collective."""

    idle: float  # seconds without a recorded collective
    in_call: float  # seconds inside one communication call the guard does not record
    call: str  # that call's name
    stack: list[str]  # user frames, innermost last


@dataclass
class Summary:
    """What one rank publishes every interval."""

    rank: int
    state: State = State.RUN
    beat: int = 0
    groups: dict[str, GroupSummary] = field(default_factory=dict)
    models: dict[str, ModelSummary] = field(default_factory=dict)
    at: Place | None = None


# --- verdicts ----------------------------------------------------------------------------------
@dataclass
class Call:
    """A rank's collective as a report names it."""

    rank: int
    seq: int
    op: str = "?"
    extra: str = ""
    site: str = "?"
    age: float | None = None  # seconds waited in it
    count: int | None = None  # collectives issued on the group
    stack: list[str] | None = None  # where the rank is now


@dataclass
class Ok:
    """Every rank finished cleanly."""

    kind: ClassVar[Kind] = Kind.OK


@dataclass
class Mismatch:
    """Different collectives at the same position of a group; each side's calls."""

    group: str
    seq: int
    sides: list[list[Call]]
    kind: ClassVar[Kind] = Kind.MISMATCH


@dataclass
class Diverged(Mismatch):
    """Different rolling digests of a group's sequence: they diverged before ``seq + 1``."""

    kind: ClassVar[Kind] = Kind.DIVERGED


@dataclass
class Finished:
    """A rank finished after fewer collectives than its peers issued."""

    group: str
    done: list[Call]
    waiting: list[Call]
    ahead: list[Call] = field(default_factory=list)
    kind: ClassVar[Kind] = Kind.FINISHED


@dataclass
class Hang:
    """A wait longer than the hang timeout for a peer that has not reached the collective."""

    group: str
    waiting: list[Call]
    lagging: list[Call]
    reps: list[int]  # ranks asked for their stacks
    timeout: float
    kind: ClassVar[Kind] = Kind.HANG


@dataclass
class Slow:
    """A long wait for a live peer: a warning, the job goes on."""

    group: str
    seq: int
    waiting: list[Call]
    lagging: list[Call]
    kind: ClassVar[Kind] = Kind.SLOW


@dataclass
class Vanished:
    """A process ended without finishing its script."""

    rank: int
    count: int
    group: str
    last: Call | None = None
    kind: ClassVar[Kind] = Kind.VANISHED


@dataclass
class Finisher:
    """A rank that finished its script while others still run."""

    rank: int
    counts: dict[str, int]
    last: Call | None = None
    script: str = ""


@dataclass
class Blocked:
    """A running rank inside a communication call the guard does not record."""

    rank: int
    call: str
    stack: list[str]
    seconds: float


@dataclass
class Stranded:
    """Every running rank waits in an unrecorded call that no finished rank will answer."""

    done: list[Finisher]
    blocked: list[Blocked]
    kind: ClassVar[Kind] = Kind.STRANDED


@dataclass
class Failed:
    """A rank's script raised."""

    rank: int
    type: str
    message: str
    site: str
    memory: list[str] = field(default_factory=list)
    kind: ClassVar[Kind] = Kind.FAILED


@dataclass
class Exited:
    """A rank's script exited with a non-zero status while the job ran."""

    rank: int
    status: int
    site: str
    kind: ClassVar[Kind] = Kind.EXITED


@dataclass
class Params:
    """Replicas of a model whose parameter digests differ after ``step``."""

    model: str
    step: int
    final: bool
    sides: list[list[int]]
    reps: list[int]  # ranks asked for their per-tensor hashes
    kind: ClassVar[Kind] = Kind.PARAMS


Verdict = (
    Ok | Mismatch | Finished | Hang | Slow | Vanished | Stranded | Failed | Exited | Params
)  # Diverged is a Mismatch
VERDICTS: tuple[type[Verdict], ...] = (
    Ok,
    Mismatch,
    Diverged,
    Finished,
    Hang,
    Slow,
    Vanished,
    Stranded,
    Failed,
    Exited,
    Params,
)
