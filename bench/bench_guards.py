"""Overhead of guards on gloo with 2 ranks: plain vs guarded vs TORCH_DISTRIBUTED_DEBUG=DETAIL.

One run measures, side by side and interleaved (to spread machine noise evenly), a small DDP
training loop and 2,000 one-element all_reduces, several repetitions per mode, and prints the
medians and the ratios guarded/plain and DETAIL/plain.

    python bench/bench_guards.py [--rounds 3] [--reps 3]
"""

from __future__ import annotations

import argparse
import os
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
        for _ in range(reps):
            for key, fn in (("ab_plain", original), ("ab_guarded", dist.all_reduce)):
                dist.barrier()
                start = time.perf_counter()
                for _ in range(ALL_REDUCES):
                    fn(one)
                out[key].append(time.perf_counter() - start)
    if rank == 0:
        queue.put(out)
    dist.destroy_process_group()


def measure(mode: str, reps: int) -> dict[str, Any]:
    ctx = mp.get_context("spawn")
    queue = ctx.SimpleQueue()
    try:
        mp.spawn(_worker, args=(2, _port(), mode, reps, queue), nprocs=2)
    except Exception as exc:
        return {k: [] for k in KEYS} | {"ddp_error": None, "error": repr(exc)[:200]}
    return queue.get()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="interleaved launches per mode")
    parser.add_argument("--reps", type=int, default=3, help="repetitions per launch")
    args = parser.parse_args()
    times: dict[str, dict[str, list[float]]] = {m: {k: [] for k in KEYS} for m in MODES}
    notes: dict[str, str] = {}
    for _ in range(args.rounds):
        for mode in MODES:
            result = measure(mode, args.reps)
            for key in KEYS:
                times[mode][key].extend(result[key])
            if result.get("ddp_error"):
                notes[mode] = f"DDP constructor failed: {result['ddp_error']}"
            if result.get("error"):
                notes[mode] = f"run failed: {result['error']}"
    medians = {
        m: {k: statistics.median(v) if v else None for k, v in times[m].items()} for m in MODES
    }
    print(f"gloo, 2 ranks, torch {torch.__version__}, {args.rounds} x {args.reps} repetitions")
    print(f"medians of rank 0, wall (and process CPU) time; DDP loop = {STEPS} steps")
    print(f"{'mode':<8} {'DDP loop':>22} {f'{ALL_REDUCES} all_reduce':>24}")
    for mode in MODES:
        cells = []
        for key in ("ddp", "all_reduce"):
            wall, cpu = medians[mode][key], medians[mode][f"{key}_cpu"]
            cells.append(f"{wall * 1000:.0f} ms ({cpu * 1000:.0f} ms)" if wall else "n/a")
        print(f"{mode:<8} {cells[0]:>22} {cells[1]:>24}")
    for mode in ("guarded", "detail"):
        cells = []
        for key in ("ddp", "all_reduce"):
            pair = []
            for k in (key, f"{key}_cpu"):
                base, value = medians["plain"][k], medians[mode][k]
                pair.append(f"{value / base:.3f}" if base and value else "n/a")
            cells.append(f"{pair[0]} (cpu {pair[1]})")
        print(f"{mode}/plain: DDP loop {cells[0]}, all_reduce loop {cells[1]}")
    ab = medians["guarded"]
    if ab["ab_plain"] and ab["ab_guarded"]:
        print(
            "same processes, alternating: all_reduce loop "
            f"original {ab['ab_plain'] * 1000:.0f} ms, "
            f"guarded {ab['ab_guarded'] * 1000:.0f} ms, "
            f"ratio {ab['ab_guarded'] / ab['ab_plain']:.3f}"
        )
    for mode, note in notes.items():
        print(f"note ({mode}): {note}")


if __name__ == "__main__":
    main()
