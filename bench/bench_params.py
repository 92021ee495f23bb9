"""Parameter hashing of guards on a 100M-parameter model: time and peak temporary memory.

Hashes every parameter the way the guard's parameter check does (``guards.hooks.params.hash_all``,
chunked) and, for comparison, the previous whole-tensor hashing, in a fresh process each so the
peak is the hashing's own. CPU peak: the resident-set high-water mark (VmHWM, reset through
/proc/self/clear_refs) above the resident size before hashing, with glibc's mmap threshold fixed
so that freed buffers are returned at once; CUDA: the allocator's peak above the memory allocated
before hashing.

    python bench/bench_params.py [--params 100] [--layers 10] [--reps 3] [--device cpu]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from guards.hooks.params import hash_all
from guards.record.hashing import CHUNK, TEMP_BYTES

MIB = 1 << 20
_MULT = 0x9E3779B97F4A7C1
_OFFSET = 0x5BD1E995


def whole_tensor_hash(t: torch.Tensor) -> torch.Tensor:
    """The previous hashing: every temporary at the tensor's full size (about 32 B/element)."""
    with torch.no_grad():
        bits = t.detach().reshape(-1).view(torch.int32).to(torch.int64)
        weights = torch.arange(1, bits.numel() + 1, device=bits.device, dtype=torch.int64)
        weights.mul_(_MULT)
        return ((bits + _OFFSET) * weights).sum() + bits.numel()


def _status(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise KeyError(field)


def _model(millions: int, layers: int, device: str) -> torch.nn.Module:
    width = int((millions * 1_000_000 / layers) ** 0.5)
    torch.manual_seed(0)
    return torch.nn.Sequential(*(torch.nn.Linear(width, width) for _ in range(layers))).to(device)


def child(method: str, millions: int, layers: int, reps: int, device: str) -> None:
    """Build the model, hash it ``reps`` times, print times and the peak as JSON."""
    torch.set_num_threads(1)
    model = _model(millions, layers, device)
    tensors = [p for p in model.parameters()]
    numel = sum(t.numel() for t in tensors)
    # load the kernels' code pages with a tiny tensor: no large freed buffer stays resident
    warm = torch.ones(1024, device=device)
    hash_all([warm]) if method == "chunked" else int(whole_tensor_hash(warm))
    if device == "cuda":
        torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
    else:
        Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM
        base = _status("VmRSS")
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        if method == "chunked":
            hash_all(tensors)
        else:
            [int(whole_tensor_hash(t)) for t in tensors]
        times.append(time.perf_counter() - start)
    peak = torch.cuda.max_memory_allocated() if device == "cuda" else _status("VmHWM")
    largest = max(t.numel() for t in tensors)
    print(json.dumps({"times": times, "peak": peak - base, "numel": numel, "largest": largest}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--params", type=int, default=100, help="millions of parameters")
    parser.add_argument("--layers", type=int, default=10, help="square Linear layers")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.params, args.layers, args.reps, args.device)
        return
    results = {}
    for method in ("chunked", "whole-tensor"):
        cmd = [sys.executable, __file__, "--child", method, "--params", str(args.params)]
        cmd += ["--layers", str(args.layers), "--reps", str(args.reps), "--device", args.device]
        # a fixed mmap threshold: glibc's dynamic one keeps freed large buffers in its heap,
        # which would count reusable memory (up to about 32 MiB) as the hashing's
        env = {**os.environ, "MALLOC_MMAP_THRESHOLD_": "131072"}
        done = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env)
        results[method] = json.loads(done.stdout.splitlines()[-1])
    first = results["chunked"]
    print(
        f"{first['numel'] / 1e6:.1f}M parameters in {args.layers} tensors of "
        f"{first['largest'] / 1e6:.1f}M elements, float32 on {args.device}, torch "
        f"{torch.__version__}, 1 thread, median of {args.reps}"
    )
    print(f"chunk {CHUNK} elements, stated bound on temporary memory {TEMP_BYTES / MIB:.0f} MiB")
    print(f"{'method':<13} {'time':>9} {'per 1M elements':>16} {'peak temporary memory':>22}")
    for method, r in results.items():
        median = statistics.median(r["times"])
        print(
            f"{method:<13} {median:>8.2f}s {median / r['numel'] * 1e9:>13.1f} ms "
            f"{r['peak'] / MIB:>17.1f} MiB"
        )
    ratio = results["chunked"]["peak"] / max(results["whole-tensor"]["peak"], 1)
    speed = statistics.median(results["chunked"]["times"]) / statistics.median(
        results["whole-tensor"]["times"]
    )
    print(f"chunked/whole-tensor: time {speed:.2f}, peak memory {ratio:.3f}")


if __name__ == "__main__":
    main()
