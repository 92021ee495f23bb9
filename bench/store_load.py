"""Store traffic of the guards exchange for many simulated ranks (threads, one local TCPStore).

Each simulated rank does per interval exactly what a guarded rank's monitor does: write its
summary key, check the verdict key; the two aggregator ranks also read every summary with one
``multi_get`` and run the verdict logic. Ops are counted at the store client, so the figures are
the real per-interval traffic. A naive design where every rank reads every other rank's summary
is shown for contrast (N * N reads).

    python bench/store_load.py            # N = 8 .. 1024
    python bench/store_load.py --max 256
"""

from __future__ import annotations

import argparse
import datetime
import os
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import torch.distributed as dist

from guards.agent import config
from guards.judge import verdict
from guards.protocol import exchange
from guards.protocol.messages import (
    Checkpoint,
    Digest,
    Entry,
    GroupSummary,
    ModelSummary,
    State,
    Summary,
)

THREADS = 32


class Counting:
    """A store proxy that counts operations, keys touched and bytes moved."""

    def __init__(self, store: Any, counts: Counter, lock: threading.Lock) -> None:
        self._store, self._counts, self._lock = store, counts, lock

    def _count(self, op: str, keys: int, size: int) -> None:
        with self._lock:
            self._counts["ops"] += 1
            self._counts["keys"] += keys
            self._counts["bytes"] += size

    def set(self, key: str, value: str) -> None:
        self._count("set", 1, len(value))
        self._store.set(key, value)

    def get(self, key: str) -> bytes:
        value = self._store.get(key)
        self._count("get", 1, len(value))
        return value

    def multi_get(self, keys: list[str]) -> list[bytes]:
        values = self._store.multi_get(keys)
        self._count("multi_get", len(keys), sum(map(len, values)))
        return values

    def check(self, keys: list[str]) -> bool:
        self._count("check", len(keys), 0)
        return self._store.check(keys)

    def add(self, key: str, amount: int) -> int:
        self._count("add", 1, 0)
        return self._store.add(key, amount)


def _summary(rank: int, beat: int) -> Summary:
    entries = [
        Entry(s, 1234567890123 + s, "all_reduce float32[1024]", "", "train.py:88") for s in range(8)
    ]
    checkpoints = [Checkpoint(15, 42), Checkpoint(-1, 0)]
    group = GroupSummary(None, 8 * beat, None, entries, checkpoints)
    models = {"WORLD#0": ModelSummary([0, 1], [Digest(100, 7)])}
    return Summary(rank, State.RUN, beat, {"WORLD": group}, models)


def simulate(n: int, port: int, intervals: int = 3) -> dict[str, float]:
    os.environ["TORCHELASTIC_RUN_ID"] = f"store-load-{n}"  # a fresh key namespace per size
    counts: Counter = Counter()
    lock = threading.Lock()
    threads = min(n, THREADS)
    clients = [
        dist.TCPStore("127.0.0.1", port, is_master=False, timeout=datetime.timedelta(seconds=60))
        for _ in range(threads)
    ]
    exchanges = []
    for rank in range(n):
        ex = exchange.Exchange(clients[rank % threads], rank, n)
        ex.store = Counting(ex.store, counts, lock)  # type: ignore[assignment]
        exchanges.append(ex)
    aggregators = exchange.aggregators(n)

    def tick(ex: exchange.Exchange, beat: int) -> None:
        ex.publish(_summary(ex.rank, beat))
        if ex.rank in aggregators:
            found = verdict.analyze(ex.read(list(range(n))), n, 300.0)
            assert found is None, found
        ex.verdict()

    def run_interval(beat: int) -> float:
        start = time.perf_counter()
        with ThreadPoolExecutor(threads) as pool:
            # each thread owns one client: ranks sharing a client run one after another
            def lane(t: int) -> None:
                for ex in exchanges[t::threads]:
                    tick(ex, beat)

            list(pool.map(lane, range(threads)))
        return time.perf_counter() - start

    run_interval(0)  # warm-up: first summaries and joins
    counts.clear()
    walls = [run_interval(beat) for beat in range(1, intervals + 1)]
    result = {
        "ops": counts["ops"] / intervals,
        "keys": counts["keys"] / intervals,
        "kib": counts["bytes"] / intervals / 1024,
        "wall": sorted(walls)[len(walls) // 2],
    }
    # an aggregator's CPU per interval (read + decode + judge), measured alone in this thread
    start = time.process_time()
    for _ in range(3):
        verdict.analyze(exchanges[0].read(list(range(n))), n, 300.0)
    result["cpu"] = (time.process_time() - start) / 3
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max", type=int, default=1024)
    args = parser.parse_args()
    server = dist.TCPStore("127.0.0.1", 0, is_master=True, wait_for_workers=False)
    print(
        f"{'ranks':>6} {'ops/int':>8} {'keys/int':>9} {'KiB/int':>8} {'ops/rank':>8} "
        f"{'growth':>6} {'naive keys':>10} {'tick s':>7} {'agg ms':>7} {'interval':>8} "
        f"{'ops/s':>6} {'agg cpu':>7}"
    )
    previous = None
    n = 8
    while n <= args.max:
        result = simulate(n, server.port)
        growth = f"{result['ops'] / previous:.2f}" if previous else "-"
        interval = config.interval_for(config.Config(), n)
        print(
            f"{n:>6} {result['ops']:>8.0f} {result['keys']:>9.0f} {result['kib']:>8.0f} "
            f"{result['ops'] / n:>8.2f} {growth:>6} {n * n:>10} {result['wall']:>7.3f} "
            f"{result['cpu'] * 1000:>7.1f} {interval:>7.2f}s {result['ops'] / interval:>6.0f} "
            f"{result['cpu'] / interval:>7.1%}"
        )
        previous = result["ops"]
        n *= 2
    print("growth: ops per interval when the rank count doubles (2.00 = linear; naive = 4.00)")
    print("agg ms: CPU of one aggregator per interval; interval: the default for that size")


if __name__ == "__main__":
    main()
