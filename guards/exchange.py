"""The cross-rank exchange over the c10d key-value store (never over the collective group).

Per interval every rank writes one summary key and checks one verdict key; the aggregator ranks
(0 and the last) read all summaries with one ``multi_get``. Traffic grows with the rank count.
"""

from __future__ import annotations

import datetime
import json
import os
import socket
import threading
from typing import Any

from torch._C._distributed_c10d import PrefixStore, Store, TCPStore

VERDICT = "verdict"
ACKS = "acks"
JOINED = "joined"


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
    run = os.environ.get("TORCHELASTIC_RUN_ID", "run")
    restart = os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")
    return f"guards/{run}/{restart}/"


def aggregators(world_size: int) -> set[int]:
    """Ranks that read every summary: two, so that one dying does not blind the job."""
    return {0, world_size - 1}


class Exchange:
    """Key layout and JSON encoding on top of a (prefixed) store."""

    def __init__(self, store: Store, rank: int, world_size: int) -> None:
        self.store = PrefixStore(namespace(), store)
        self.rank = rank
        self.world_size = world_size
        self._seen: set[int] = set()
        self._joined = False
        self._has_multi_get = hasattr(self.store, "multi_get")
        self.lock = threading.Lock()

    def publish(self, summary: dict[str, Any]) -> None:
        text = json.dumps(summary, separators=(",", ":"))
        with self.lock:
            self.store.set(f"s/{self.rank}", text)
            if not self._joined:
                self.store.add(JOINED, 1)
                self._joined = True

    def read(self, ranks: list[int]) -> dict[int, dict[str, Any]]:
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
        return {r: json.loads(v) for r, v in zip(wanted, values, strict=True)}

    def read_one(self, rank: int) -> dict[str, Any] | None:
        key = f"s/{rank}"
        return json.loads(self.store.get(key)) if self.store.check([key]) else None

    def propose(self, verdict: dict[str, Any]) -> dict[str, Any]:
        """Write the verdict unless one exists; return the verdict that holds."""
        text = json.dumps(verdict, separators=(",", ":"))
        held: dict[str, Any] = json.loads(self.store.compare_set(VERDICT, "", text))
        return held

    def claim(self, key: str) -> bool:
        """Whether this rank is the first to claim ``key`` (one rank prints a warning)."""
        mine = str(self.rank)
        return bool(self.store.compare_set(key, "", mine).decode() == mine)

    def verdict(self) -> dict[str, Any] | None:
        if not self.store.check([VERDICT]):
            return None
        held: dict[str, Any] = json.loads(self.store.get(VERDICT))
        return held

    def put_detail(self, value: Any) -> None:
        self.store.set(f"x/{self.rank}", json.dumps(value, separators=(",", ":")))

    def get_detail(self, rank: int) -> Any:
        key = f"x/{rank}"
        return json.loads(self.store.get(key)) if self.store.check([key]) else None

    def ack(self) -> int:
        return self.store.add(ACKS, 1)

    def acks(self) -> int:
        return self.store.add(ACKS, 0)

    def register_local(self, host: str, local_rank: int) -> None:
        self.store.set(f"l/{host}/{local_rank}", json.dumps([self.rank, os.getpid()]))

    def local_peer(self, host: str, local_rank: int) -> tuple[int, int] | None:
        key = f"l/{host}/{local_rank}"
        if not self.store.check([key]):
            return None
        rank, pid = json.loads(self.store.get(key))
        return rank, pid
