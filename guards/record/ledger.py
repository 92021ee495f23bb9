"""Per-rank ring buffers of issued collectives, one per process group."""

from __future__ import annotations

import time
import zlib
from typing import Any, NamedTuple

import torch.distributed as dist

from .fingerprint import Meta, fingerprint

RING = 4096
CHECKPOINT = 16
FINGERPRINT_CACHE = 4096
_FNV_PRIME = 0x100000001B3
_MASK63 = (1 << 63) - 1


class Entry(NamedTuple):
    """One recorded collective."""

    seq: int
    fingerprint: int
    digest: int  # rolling digest of the group's sequence up to this one
    op: str
    meta: Meta
    site: str


def roll(digest: int, fp: int) -> int:
    """The rolling digest of a sequence after one more fingerprint (plain integer arithmetic,
    the same in every process)."""
    return ((digest ^ fp) * _FNV_PRIME) & _MASK63


class GroupLedger:
    """The collectives one rank issued on one process group, numbered from 0."""

    __slots__ = (
        "_fps",
        "_seen",
        "blocked",
        "code",
        "count",
        "digest",
        "name",
        "pending",
        "ranks",
        "ring",
        "waiting",
    )

    def __init__(self, name: str, ranks: list[int]) -> None:
        self.name = name
        self.ranks = ranks
        self.code = zlib.crc32(name.encode())
        self.count = 0
        self.digest = 0
        self.ring: list[Entry | None] = [None] * RING
        self.waiting: dict[int, float] = {}  # async waits: seq -> since
        self.pending: dict[int, tuple[float, Any]] = {}  # DDP buckets: seq -> (since, future)
        self.blocked = -1  # the synchronous collective the caller is inside, if any
        self._seen = (-1, 0.0)  # (blocked seq, when the monitor first saw it)
        # fingerprints by (op, meta): the digest is computed once per call shape; the dict's own
        # hashing stays in this process
        self._fps: dict[tuple[int, Meta], int] = {}

    def fingerprint(self, op_code: int, meta: Meta) -> int:
        key = (op_code, meta)
        fp = self._fps.get(key)
        if fp is None:
            fp = fingerprint(op_code, self.code, meta)
            if len(self._fps) >= FINGERPRINT_CACHE:
                self._fps.clear()
            self._fps[key] = fp
        return fp

    def record(self, op: str, op_code: int, meta: Meta, site: str) -> int:
        """Append a collective; return its sequence number."""
        return self.append(self.fingerprint(op_code, meta), op, meta, site)

    def append(self, fp: int, op: str, meta: Meta, site: str) -> int:
        """Append a fingerprinted collective (hot path: local memory only); return its seq."""
        seq = self.count
        digest = ((self.digest ^ fp) * _FNV_PRIME) & _MASK63  # roll(), inlined: the hot path
        self.ring[seq % RING] = Entry(seq, fp, digest, op, meta, site)
        self.count = seq + 1
        self.digest = digest
        return seq

    def wait_begin(self, seq: int) -> None:
        self.waiting[seq] = time.monotonic()

    def wait_end(self, seq: int) -> None:
        self.waiting.pop(seq, None)

    def wait_for(self, seq: int, future: Any) -> None:
        """A collective that completes with ``future`` (a DDP bucket): waiting until it is
        done. The monitor asks the future, so the hot path adds no callback."""
        pending = self.pending
        if len(pending) > 64:
            for done in [s for s, (_, f) in list(pending.items()) if f.done()]:
                pending.pop(done, None)
        pending[seq] = (time.monotonic(), future)

    def entry(self, seq: int) -> Entry | None:
        """The entry with this sequence number, if still in the ring."""
        if seq < 0:
            return None
        found = self.ring[seq % RING]
        return found if found is not None and found.seq == seq else None

    def last(self, k: int) -> list[Entry]:
        """The last ``k`` entries, oldest first."""
        out = [self.entry(s) for s in range(max(0, self.count - k), self.count)]
        return [e for e in out if e is not None]

    def oldest_wait(self) -> tuple[int, float] | None:
        """(seq, seconds) of the oldest collective this rank is blocked in, if any.

        A synchronous collective is timed from when this was first asked while it was blocked
        (the monitor asks every interval), which keeps the clock off the hot path.
        """
        now = time.monotonic()
        try:
            items = list(self.waiting.items())
        except RuntimeError:
            items = []
        try:
            pending = list(self.pending.items())
        except RuntimeError:
            pending = []
        for seq, (since, future) in pending:
            if future.done():
                self.pending.pop(seq, None)
            else:
                items.append((seq, since))
        blocked = self.blocked
        if blocked >= 0:
            if self._seen[0] != blocked:
                self._seen = (blocked, now)
            items.append(self._seen)
        if not items:
            return None
        seq, since = min(items)
        return seq, now - since

    def checkpoints(self) -> list[tuple[int, int]]:
        """Rolling digests at the two latest sequence numbers that are multiples of CHECKPOINT."""
        top = self.count // CHECKPOINT * CHECKPOINT - 1
        out = []
        for seq in (top, top - CHECKPOINT):
            entry = self.entry(seq)
            if entry is not None:
                out.append((seq, entry.digest))
        return out


class Ledger:
    """All group ledgers of this process, found by process-group object."""

    def __init__(self) -> None:
        self.groups: dict[Any, GroupLedger | None] = {}
        self.world: GroupLedger | None = None

    def group(self, pg: Any) -> GroupLedger | None:
        """The ledger of ``pg`` (None means the default group); None when not a member."""
        if pg is None:
            world = self.world
            if world is not None:
                return world
            if not dist.is_initialized():
                return None
            pg = dist.group.WORLD
        try:
            return self.groups[pg]
        except KeyError:
            pass
        except TypeError:
            return None
        ledger = self._make(pg)
        self.groups[pg] = ledger
        return ledger

    def _make(self, pg: Any) -> GroupLedger | None:
        try:
            ranks = list(dist.get_process_group_ranks(pg))
            rank = dist.get_rank()
        except Exception:
            return None
        if rank not in ranks:
            return None
        is_world = pg is dist.group.WORLD
        members = ",".join(map(str, ranks)) if len(ranks) <= 8 else f"{len(ranks)} ranks"
        name = "WORLD" if is_world else f"group {getattr(pg, 'group_name', '?')} [{members}]"
        ledger = GroupLedger(name, ranks)
        if is_world:
            self.world = ledger
        return ledger

    def all(self) -> list[GroupLedger]:
        return [g for g in list(self.groups.values()) if g is not None]
