"""Cost of `guards compare` recording on a DDP step: gloo, 2 ranks, in the same processes.

Each rank trains a small MLP (128-256-10 by default, wider with ``--hidden``; batch 32 per
rank from a DataLoader with a DistributedSampler) and alternates blocks of steps without and
with recording (the recording hooks installed before a block and removed after it; the order
flips every round so that drift favours neither). It prints, for wall time and for the main
thread's CPU time (where every recording hook runs; less disturbed by other processes on a
shared machine), the plain step time, the added time per step and the median of the per-round
ratios recorded/plain, which must stay at or below 1.05.

    python bench/bench_compare.py [--rounds 30] [--steps 25] [--hidden 256]
"""

from __future__ import annotations

import argparse
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from guards.compare import hooks
from guards.compare.recorder import Recorder

WORLD = 2
BATCH = 32


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _block(model: Any, loader: Any, optimizer: Any, steps: int) -> tuple[float, float]:
    """Wall time and this thread's CPU time of ``steps`` training steps."""
    dist.barrier()
    start, cpu = time.perf_counter(), time.thread_time()
    done = 0
    while done < steps:
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            done += 1
            if done == steps:
                break
    return time.perf_counter() - start, time.thread_time() - cpu


def _worker(
    rank: int, port: int, rounds: int, steps: int, hidden: int, folder: str, queue: Any
) -> None:
    torch.set_num_threads(1)
    dist.init_process_group(
        "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=WORLD
    )
    torch.manual_seed(0)
    data = TensorDataset(
        torch.randn(BATCH * WORLD * steps, 128), torch.randint(0, 10, (BATCH * WORLD * steps,))
    )
    sampler = DistributedSampler(data, shuffle=True, seed=0)
    loader = DataLoader(data, batch_size=BATCH, sampler=sampler)
    net = torch.nn.Sequential(
        torch.nn.Linear(128, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 10)
    )
    model = DDP(net)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    # one recorder for the whole run, as in a recorded job; its hooks are installed only
    # around the recorded blocks (installing is a one-time cost of a run, outside the timing)
    recorder = Recorder(Path(folder), None, rank, WORLD, "bench", "bench")
    patches = hooks.install(recorder)
    _block(model, loader, optimizer, steps)  # warm-up, and the recorder's first-step scan
    patches.remove()
    _block(model, loader, optimizer, steps)
    times: dict[str, list[tuple[float, float]]] = {"plain": [], "recorded": []}
    for index in range(rounds):
        order = ("plain", "recorded") if index % 2 == 0 else ("recorded", "plain")
        for mode in order:
            if mode == "recorded":
                patches = hooks.install(recorder)
            try:
                times[mode].append(_block(model, loader, optimizer, steps))
            finally:
                if mode == "recorded":
                    patches.remove()
    recorder.close()
    if not recorder.active or recorder.step != (rounds + 1) * steps:
        raise RuntimeError(f"recorded {recorder.step} steps, expected {(rounds + 1) * steps}")
    if rank == 0:
        queue.put(times)
    dist.destroy_process_group()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--steps", type=int, default=25)
    parser.add_argument("--hidden", type=int, default=256, help="hidden width of the MLP")
    ns = parser.parse_args()
    ctx = mp.get_context("spawn")
    queue = ctx.SimpleQueue()
    with tempfile.TemporaryDirectory() as folder:
        mp.spawn(
            _worker,
            args=(_port(), ns.rounds, ns.steps, ns.hidden, folder, queue),
            nprocs=WORLD,
            join=True,
        )
        times = queue.get()
    print(
        f"gloo, {WORLD} ranks, torch {torch.__version__}, MLP 128-{ns.hidden}-10, "
        f"{ns.rounds} rounds x {ns.steps} steps"
    )
    for column, what in ((0, "wall"), (1, "main-thread CPU")):
        plain = [t[column] for t in times["plain"]]
        recorded = [t[column] for t in times["recorded"]]
        ratios = [r / p for p, r in zip(plain, recorded, strict=True)]
        per_step = statistics.median(plain) / ns.steps * 1000
        extra = (statistics.median(recorded) - statistics.median(plain)) / ns.steps * 1e6
        print(
            f"{what:>15}: plain {per_step:.2f} ms/step, recorded {extra:+.0f} us/step; "
            f"recorded/plain median of per-round ratios {statistics.median(ratios):.3f} "
            f"(quartiles {_quartiles(ratios)})"
        )
    print("target: recorded/plain <= 1.05")


def _quartiles(values: list[float]) -> str:
    q = statistics.quantiles(values, n=4)
    return f"{q[0]:.3f}-{q[2]:.3f}"


if __name__ == "__main__":
    main()
