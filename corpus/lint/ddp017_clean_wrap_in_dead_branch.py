"""A benchmark pinned to one process: `world_size = 1` is a constant of `main`, so the DDP
wrap under `if world_size > 1:` never runs (nor does the per-rank code after an early
exit on `world_size == 1`); no finding is about code that never runs."""
import argparse

import torch
import torch.distributed as dist
import torchvision
from torch.nn.parallel import DistributedDataParallel as DDP


def benchmark(model, steps):
    x = torch.randn(8, 3, 224, 224)
    for _ in range(steps):
        model(x).sum().backward()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()
    world_size = 1
    model = torchvision.models.resnet18()
    if world_size > 1:
        dist.init_process_group("nccl")
        model = DDP(model.cuda(), device_ids=[0])
    benchmark(model, args.steps)
    if world_size == 1:
        return
    torch.save(model.state_dict(), "bench.pt")


if __name__ == "__main__":
    main()
