"""Overhead of guards on gloo with 2 ranks: plain vs guarded vs TORCH_DISTRIBUTED_DEBUG=DETAIL.

One run measures a small DDP training loop and 2,000 one-element all_reduces, several
repetitions per launch, in rounds of one launch per mode (the order alternates between rounds, to
spread machine noise evenly). It prints the medians of each mode and the median over rounds of
the per-round ratios guarded/plain and DETAIL/plain, then the guarded process's own original and
wrapped all_reduce, alternating in the same processes (median of the per-pair ratios).

    python bench/bench_guards.py [--rounds 5] [--reps 3]

On a shared machine wall and CPU times drift with the load; ``--calls`` instead counts the Python
function calls (cProfile) per DDP step and per all_reduce, plain and guarded: exact, whatever the
load, and a proxy for the guard's own work on the user's thread.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import socket
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

MODES = ("plain", "guarded", "detail")
STEPS = 50
ALL_REDUCES = 2000
KEYS = ("ddp", "all_reduce", "ddp_cpu", "all_reduce_cpu", "ab_plain", "ab_guarded")


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _worker(rank: int, world: int, port: int, mode: str, reps: int, queue: Any) -> None:
    torch.set_num_threads(1)
    if mode == "detail":
        os.environ["TORCH_DISTRIBUTED_DEBUG"] = "DETAIL"
    if mode == "guarded":
        import guards

        guards.install()
    dist.init_process_group(
        "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world
    )
    out: dict[str, Any] = {k: [] for k in KEYS} | {"ddp_error": None}
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(128, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
    model = None
    try:
        model = DDP(net)
    except Exception as exc:  # DETAIL may fail inside DDP's constructor on gloo
        out["ddp_error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
    x, y = torch.randn(32, 128), torch.randint(0, 10, (32,))
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    one = torch.ones(1)
    for _ in range(reps):
        if model is not None:
            dist.barrier()
            start, cpu = time.perf_counter(), time.process_time()
            for _ in range(STEPS):
                loss = torch.nn.functional.cross_entropy(model(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
            out["ddp"].append(time.perf_counter() - start)
            out["ddp_cpu"].append(time.process_time() - cpu)
        dist.barrier()
        start, cpu = time.perf_counter(), time.process_time()
        for _ in range(ALL_REDUCES):
            dist.all_reduce(one)
        out["all_reduce"].append(time.perf_counter() - start)
        out["all_reduce_cpu"].append(time.process_time() - cpu)
    if mode == "guarded":
        # the same processes, alternating the original and the wrapped all_reduce: immune to
        # the drift between launches on a shared machine
        original = dist.all_reduce.__wrapped__
        for rep in range(2 * reps):
            pair = (("ab_plain", original), ("ab_guarded", dist.all_reduce))
            for key, fn in pair if rep % 2 else pair[::-1]:
                dist.barrier()
                start = time.perf_counter()
                for _ in range(ALL_REDUCES // 2):
                    fn(one)
                out[key].append(time.perf_counter() - start)
    if rank == 0:
        queue.put(out)
    dist.destroy_process_group()


def _count_worker(rank: int, world: int, port: int, mode: str, queue: Any) -> None:
    torch.set_num_threads(1)
    if mode == "guarded":
        import guards

        guards.install()
    dist.init_process_group(
        "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world
    )
    net = torch.nn.Sequential(torch.nn.Linear(128, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
    model = DDP(net)
    x, y = torch.randn(32, 128), torch.randint(0, 10, (32,))
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    one = torch.ones(1)

    def steps(n: int) -> None:
        for _ in range(n):
            loss = torch.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()

    def all_reduces(n: int) -> None:
        for _ in range(n):
            dist.all_reduce(one)

    counts = {}
    for name, loop, n in (("ddp", steps, STEPS), ("all_reduce", all_reduces, ALL_REDUCES)):
        loop(5)
        profile = cProfile.Profile()
        profile.runcall(loop, n)
        counts[name] = pstats.Stats(profile).total_calls / n
    if rank == 0:
        queue.put(counts)
    dist.destroy_process_group()


def count_calls() -> None:
    ctx = mp.get_context("spawn")
    counts = {}
    for mode in ("plain", "guarded"):
        queue = ctx.SimpleQueue()
        mp.spawn(_count_worker, args=(2, _port(), mode, queue), nprocs=2)
        counts[mode] = queue.get()
    print(f"gloo, 2 ranks, torch {torch.__version__}: Python function calls (cProfile), rank 0")
    print(f"{'':<12} {'plain':>8} {'guarded':>8} {'added':>8}")
    for key, label in (("ddp", "per DDP step"), ("all_reduce", "per all_reduce")):
        plain, guarded = counts["plain"][key], counts["guarded"][key]
        print(f"{label:<14} {plain:>6.1f} {guarded:>8.1f} {guarded - plain:>8.1f}")


def measure(mode: str, reps: int) -> dict[str, Any]:
    ctx = mp.get_context("spawn")
    queue = ctx.SimpleQueue()
    try:
        mp.spawn(_worker, args=(2, _port(), mode, reps, queue), nprocs=2)
    except Exception as exc:
        return {k: [] for k in KEYS} | {"ddp_error": None, "error": repr(exc)[:200]}
    return queue.get()


def _ratio(values: list[float], base: list[float]) -> float | None:
    return statistics.median(values) / statistics.median(base) if values and base else None


def _median(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def _cell(value: float | None) -> str:
    return f"{value:.3f}" if value is not None else "n/a"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds of one launch per mode")
    parser.add_argument("--reps", type=int, default=3, help="repetitions per launch")
    parser.add_argument("--calls", action="store_true", help="count Python calls instead")
    args = parser.parse_args()
    if args.calls:
        count_calls()
        return
    times: dict[str, dict[str, list[float]]] = {m: {k: [] for k in KEYS} for m in MODES}
    ratios: dict[str, dict[str, list[float | None]]] = {
        m: {k: [] for k in KEYS[:4]} for m in MODES[1:]
    }
    notes: dict[str, str] = {}
    for round_ in range(args.rounds):
        results = {}
        for mode in MODES if round_ % 2 == 0 else MODES[::-1]:
            results[mode] = result = measure(mode, args.reps)
            for key in KEYS:
                times[mode][key].extend(result[key])
            if result.get("ddp_error"):
                notes[mode] = f"DDP constructor failed: {result['ddp_error']}"
            if result.get("error"):
                notes[mode] = f"run failed: {result['error']}"
        for mode in MODES[1:]:
            for key in KEYS[:4]:
                ratios[mode][key].append(_ratio(results[mode][key], results["plain"][key]))
    medians = {
        m: {k: statistics.median(v) if v else None for k, v in times[m].items()} for m in MODES
    }
    print(f"gloo, 2 ranks, torch {torch.__version__}, {args.rounds} rounds x {args.reps} reps")
    print(f"medians of rank 0, wall (and process CPU) time; DDP loop = {STEPS} steps")
    print(f"{'mode':<8} {'DDP loop':>22} {f'{ALL_REDUCES} all_reduce':>24}")
    for mode in MODES:
        cells = []
        for key in ("ddp", "all_reduce"):
            wall, cpu = medians[mode][key], medians[mode][f"{key}_cpu"]
            cells.append(f"{wall * 1000:.0f} ms ({cpu * 1000:.0f} ms)" if wall and cpu else "n/a")
        print(f"{mode:<8} {cells[0]:>22} {cells[1]:>24}")
    print("median over rounds of the per-round ratio, wall (cpu):")
    for mode in MODES[1:]:
        r = {k: _median(v) for k, v in ratios[mode].items()}
        print(
            f"  {mode}/plain: DDP loop {_cell(r['ddp'])} (cpu {_cell(r['ddp_cpu'])}), "
            f"all_reduce loop {_cell(r['all_reduce'])} (cpu {_cell(r['all_reduce_cpu'])})"
        )
    ab = times["guarded"]
    pairs = [g / p for g, p in zip(ab["ab_guarded"], ab["ab_plain"], strict=True)]
    if pairs:
        print(
            f"same processes, alternating: {ALL_REDUCES // 2} all_reduces, original "
            f"{statistics.median(ab['ab_plain']) * 1000:.0f} ms, wrapped "
            f"{statistics.median(ab['ab_guarded']) * 1000:.0f} ms, "
            f"median of {len(pairs)} pair ratios {statistics.median(pairs):.3f}"
        )
    for mode, note in notes.items():
        print(f"note ({mode}): {note}")


if __name__ == "__main__":
    main()
