"""The cross-rank exchange over the c10d key-value store (never over the collective group).

Per interval every rank writes one summary key and checks one verdict key; the aggregator ranks
(0 and the last) read all summaries with one ``multi_get``. Traffic grows with the rank count.

Every key lives under ``guards/<run>/<restart>/v<VERSION>/``: guards of different protocol
versions in one job never read each other's records. The first rank to connect writes its
version to ``guards/<run>/<restart>/version``; a rank of another version finds it there, writes
``conflict``, and both sides turn their guard off (``Exchange.conflict``). A guard from before
versioned keys (v1) is recognised by its unversioned ``joined`` counter; this rank also publishes
itself there as off, so that a v1 guard leaves it out instead of waiting for it.
"""

from __future__ import annotations

import datetime
import os
import socket
import threading

from torch._C._distributed_c10d import PrefixStore, Store, TCPStore

from . import wire
from .messages import Summary, Verdict

VERDICT = "verdict"
ACKS = "acks"
OFF = "off"  # how many ranks turned their guard off (they never acknowledge a verdict)
JOINED = "joined"
VERSION_KEY = "version"
CONFLICT = "conflict"
# what a v1 guard reads as a rank whose guard is off
_V1_OFF = '{"r":%d,"st":"off","hb":0,"g":{},"ps":{},"at":null}'


def connect(address: str | None, timeout: float) -> Store:
    """A client of ``host:port``, or of MASTER_ADDR:MASTER_PORT (torchrun's store)."""
    if address:
        host, _, port = address.rpartition(":")
    else:
        host, port = os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"]
    # fail fast on a refused or unroutable address: TCPStore's own connect retries until its
    # timeout, and a process that exits meanwhile aborts in its C++ thread
    with socket.create_connection((host, int(port)), timeout=timeout):
        pass
    return TCPStore(
        host,
        int(port),
        is_master=False,
        timeout=datetime.timedelta(seconds=timeout),
        wait_for_workers=False,
    )


def namespace() -> str:
    """The keys of this job (attempt), whatever the guard's version."""
    run = os.environ.get("TORCHELASTIC_RUN_ID", "run")
    restart = os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")
    return f"guards/{run}/{restart}/"


def version_conflict(mine: int, other: str) -> str:
    """The one line a rank prints when another rank of the job runs another guard version."""
    return (
        f"another rank of this job runs guards protocol v{other}, this one v{mine} (different "
        "guards installations); install the same guards on every node. This job continues "
        "without the guard"
    )


# what a rank asked for details publishes: its main thread's stack, or per-tensor hashes
Detail = list[str] | dict[str, int] | None


def aggregators(world_size: int) -> set[int]:
    """Ranks that read every summary: two, so that one dying does not blind the job."""
    return {0, world_size - 1}


class Exchange:
    """Key layout and encoding on top of a (prefixed) store."""

    def __init__(self, store: Store, rank: int, world_size: int) -> None:
        self.job = PrefixStore(namespace(), store)
        self.version = wire.VERSION
        self.store = PrefixStore(f"v{self.version}/", self.job)
        self.rank = rank
        self.world_size = world_size
        self._seen: set[int] = set()
        self._joined = False
        self._has_multi_get = hasattr(self.store, "multi_get")
        self.lock = threading.Lock()

    # --- versions ---------------------------------------------------------------------------
    def claim_version(self) -> str | None:
        """Write this guard's version unless one is there; the other version if it differs."""
        mine = str(self.version)
        held = self.job.compare_set(VERSION_KEY, "", mine).decode()
        self.job.set(f"s/{self.rank}", _V1_OFF % self.rank)
        if held != mine:
            self.job.set(CONFLICT, mine)  # what the ranks of the first version find
            return held
        return None

    def conflict(self) -> str | None:
        """Another version found in this job; checked only until every rank has joined this
        version's keys (then there is none), so that it adds no store traffic afterwards."""
        if len(self._seen) >= self.world_size:
            return None
        if self.store.add(JOINED, 0) >= self.world_size:
            self._seen = set(range(self.world_size))
            return None
        if self.job.check([CONFLICT]):
            other = self.job.get(CONFLICT).decode()
            return other if other != str(self.version) else None
        if self.job.check([JOINED]):
            return "1"
        return None

    # --- summaries and verdicts ---------------------------------------------------------------
    def publish(self, summary: Summary) -> None:
        text = wire.encode_summary(summary)
        with self.lock:
            self.store.set(f"s/{self.rank}", text)
            if not self._joined:
                self.store.add(JOINED, 1)
                self._joined = True

    def read(self, ranks: list[int]) -> dict[int, Summary]:
        """Summaries of ``ranks`` that exist (checks each missing one until all joined)."""
        if len(self._seen) < self.world_size:
            if self.store.add(JOINED, 0) >= self.world_size:
                self._seen = set(range(self.world_size))
            else:
                for r in ranks:
                    if r not in self._seen and self.store.check([f"s/{r}"]):
                        self._seen.add(r)
        wanted = [r for r in ranks if r in self._seen]
        keys = [f"s/{r}" for r in wanted]
        if self._has_multi_get:
            values = self.store.multi_get(keys) if keys else []
        else:
            values = [self.store.get(k) for k in keys]
        return {r: wire.decode_summary(v) for r, v in zip(wanted, values, strict=True)}

    def read_one(self, rank: int) -> Summary | None:
        key = f"s/{rank}"
        return wire.decode_summary(self.store.get(key)) if self.store.check([key]) else None

    def propose(self, verdict: Verdict) -> Verdict:
        """Write the verdict unless one exists; return the verdict that holds."""
        text = wire.encode_verdict(verdict)
        return wire.decode_verdict(self.store.compare_set(VERDICT, "", text))

    def claim(self, key: str) -> bool:
        """Whether this rank is the first to claim ``key`` (one rank prints a warning)."""
        mine = str(self.rank)
        return bool(self.store.compare_set(key, "", mine).decode() == mine)

    def verdict(self) -> Verdict | None:
        if not self.store.check([VERDICT]):
            return None
        return wire.decode_verdict(self.store.get(VERDICT))

    def put_detail(self, value: Detail) -> None:
        self.store.set(f"x/{self.rank}", wire.encode(value))

    def get_detail(self, rank: int) -> Detail:
        key = f"x/{rank}"
        return wire.loads(self.store.get(key)) if self.store.check([key]) else None

    def ack(self) -> int:
        return self.store.add(ACKS, 1)

    def acks(self) -> int:
        return self.store.add(ACKS, 0)

    def turn_off(self) -> None:
        self.store.add(OFF, 1)

    def offs(self) -> int:
        return self.store.add(OFF, 0)

    def register_local(self, host: str, local_rank: int) -> None:
        self.store.set(f"l/{host}/{local_rank}", wire.encode([self.rank, os.getpid()]))

    def local_peer(self, host: str, local_rank: int) -> tuple[int, int] | None:
        key = f"l/{host}/{local_rank}"
        if not self.store.check([key]):
            return None
        rank, pid = wire.decode(self.store.get(key), tuple[int, int])
        return rank, pid
