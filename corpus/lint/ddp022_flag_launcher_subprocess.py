"""Sweep launcher: starts one multi-GPU training job per learning rate."""
import argparse
import subprocess
import sys

import torch


def launch(script, nproc, extra, master_port):
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.launch",  # expect: DDP022
        f"--nproc_per_node={nproc}",
        f"--master_port={master_port}",
        script,
        *extra,
    ]
    print(" ".join(cmd))
    return subprocess.run(cmd, check=False).returncode


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--script", default="train.py")
    parser.add_argument("--lrs", nargs="+", type=float, default=[1e-3, 3e-4, 1e-4])
    parser.add_argument("--gpus", type=int, default=torch.cuda.device_count())
    args = parser.parse_args()
    failures = 0
    for i, lr in enumerate(args.lrs):
        code = launch(args.script, args.gpus, ["--lr", str(lr)], 29500 + i)
        failures += code != 0
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
