"""Cost of `guards compare` recording on a DDP training step: gloo, 2 ranks, same processes.

Each rank (one CPU thread) trains with DDP on batches of 32 from a DataLoader with a shuffling
DistributedSampler: cross-entropy, ``zero_grad``, ``backward`` (DDP's all-reduce), an SGD step
with momentum. The step, by ``--model``:

- ``cnn`` (the realistic step): a CIFAR-style network on 3x32x32 images, four 3x3 convolutions
  (16-16-32-64 channels, the last two with stride 2) each with BatchNorm and ReLU, global
  average pooling and a linear layer to 10 classes: 14 tensors, 26,682 parameters;
- ``mlp`` (the worst case): a 128-256-10 MLP (wider with ``--hidden``), a step of a few
  milliseconds, where the fixed per-step cost of recording shows most.

Blocks of steps without and with recording alternate (the hooks installed before a recorded
block and removed after it; the order flips every round so that drift favours neither). For wall
time and for the main thread's CPU time (where every recording hook runs; less disturbed by
other processes on a shared machine) it prints the median plain and recorded step times side by
side, the added time per step and the median of the per-round ratios recorded/plain, with
quartiles. Target: recorded/plain <= 1.05.

    python bench/bench_compare.py [--model cnn mlp] [--rounds 20] [--steps 10] [--hidden 256]
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
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from guards.compare import hooks
from guards.compare.recorder import Recorder

WORLD = 2
BATCH = 32
MODES = ("plain", "recorded")


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _conv(inputs: int, outputs: int, stride: int) -> list[nn.Module]:
    return [
        nn.Conv2d(inputs, outputs, 3, stride, 1, bias=False),
        nn.BatchNorm2d(outputs),
        nn.ReLU(),
    ]


def build(model: str, hidden: int, samples: int) -> tuple[nn.Module, TensorDataset]:
    """The network and a synthetic dataset of ``samples`` labelled inputs for it."""
    if model == "cnn":
        net = nn.Sequential(
            *_conv(3, 16, 1),
            *_conv(16, 16, 1),
            *_conv(16, 32, 2),
            *_conv(32, 64, 2),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
            nn.Linear(64, 10),
        )
        inputs = torch.randn(samples, 3, 32, 32)
    else:
        net = nn.Sequential(nn.Linear(128, hidden), nn.ReLU(), nn.Linear(hidden, 10))
        inputs = torch.randn(samples, 128)
    return net, TensorDataset(inputs, torch.randint(0, 10, (samples,)))


def describe(model: str, hidden: int) -> str:
    net, _ = build(model, hidden, 1)
    tensors = list(net.parameters())
    shape = "CNN 16-16-32-64 with BatchNorm" if model == "cnn" else f"MLP 128-{hidden}-10"
    return f"{shape} ({len(tensors)} tensors, {sum(t.numel() for t in tensors):,} parameters)"


def _block(model: Any, loader: Any, optimizer: Any, steps: int) -> tuple[float, float]:
    """Wall time and this thread's CPU time of ``steps`` training steps."""
    dist.barrier()
    start, cpu = time.perf_counter(), time.thread_time()
    done = 0
    while done < steps:
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            done += 1
            if done == steps:
                break
    return time.perf_counter() - start, time.thread_time() - cpu


def _worker(rank: int, port: int, ns: argparse.Namespace, folder: str, queue: Any) -> None:
    torch.set_num_threads(1)
    dist.init_process_group(
        "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=WORLD
    )
    torch.manual_seed(0)
    net, data = build(ns.model, ns.hidden, BATCH * WORLD * ns.steps)
    loader = DataLoader(data, batch_size=BATCH, sampler=DistributedSampler(data, seed=0))
    model = DDP(net)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    # one recorder for the whole run, as in a recorded job; its hooks are installed only
    # around the recorded blocks (installing is a one-time cost of a run, outside the timing)
    recorder = Recorder(Path(folder), None, rank, WORLD, "bench", "bench")
    patches = hooks.install(recorder)
    _block(model, loader, optimizer, ns.steps)  # warm-up, and the recorder's first-step scan
    patches.remove()
    _block(model, loader, optimizer, ns.steps)
    times: dict[str, list[tuple[float, float]]] = {mode: [] for mode in MODES}
    for index in range(ns.rounds):
        for mode in MODES if index % 2 == 0 else MODES[::-1]:
            if mode == "recorded":
                patches = hooks.install(recorder)
            try:
                times[mode].append(_block(model, loader, optimizer, ns.steps))
            finally:
                if mode == "recorded":
                    patches.remove()
    recorder.close()
    if not recorder.active or recorder.step != (ns.rounds + 1) * ns.steps:
        raise RuntimeError(f"recorded {recorder.step} steps, expected {(ns.rounds + 1) * ns.steps}")
    if rank == 0:
        queue.put(times)
    dist.destroy_process_group()


def measure(ns: argparse.Namespace) -> dict[str, list[tuple[float, float]]]:
    """Per-round (wall, main-thread CPU) seconds of rank 0, plain and recorded."""
    queue = mp.get_context("spawn").SimpleQueue()
    with tempfile.TemporaryDirectory() as folder:
        mp.spawn(_worker, args=(_port(), ns, folder, queue), nprocs=WORLD, join=True)
        times: dict[str, list[tuple[float, float]]] = queue.get()
    return times


def report(times: dict[str, list[tuple[float, float]]], steps: int) -> None:
    print(f"{'':>15}  {'plain':>10}  {'recorded':>10}  {'added':>9}  ratio (quartiles)")
    for column, what in ((0, "wall"), (1, "main-thread CPU")):
        plain, recorded = ([t[column] / steps for t in times[mode]] for mode in MODES)
        ratios = [r / p for p, r in zip(plain, recorded, strict=True)]
        low, _, high = statistics.quantiles(ratios, n=4)
        plain_ms, recorded_ms = statistics.median(plain) * 1e3, statistics.median(recorded) * 1e3
        print(
            f"{what:>15}  {plain_ms:7.2f} ms  {recorded_ms:7.2f} ms  "
            f"{(recorded_ms - plain_ms) * 1e3:+6.0f} us  "
            f"{statistics.median(ratios):.3f} ({low:.3f}-{high:.3f})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", nargs="+", choices=("cnn", "mlp"), default=["cnn", "mlp"])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--steps", type=int, default=10, help="steps per block")
    parser.add_argument("--hidden", type=int, default=256, help="hidden width of the MLP")
    ns = parser.parse_args()
    print(f"gloo, {WORLD} ranks x 1 thread, torch {torch.__version__}, batch {BATCH} per rank")
    for model in ns.model:
        run = argparse.Namespace(**{**vars(ns), "model": model})
        times = measure(run)
        print(f"\n{describe(model, ns.hidden)}: {ns.rounds} rounds x {ns.steps} steps per mode")
        report(times, ns.steps)
    print("\nper step, medians of rank 0; ratio: median of the per-round ratios recorded/plain")
    print("target: recorded/plain <= 1.05")


if __name__ == "__main__":
    main()
