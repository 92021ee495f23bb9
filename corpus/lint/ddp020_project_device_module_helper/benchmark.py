"""Throughput on every rank: the helper only counts devices, nothing sets this rank's
device, so every rank's "cuda" is GPU 0."""

import torch
import torch.distributed as dist

import devices


def benchmark(model, steps=10):
    dist.init_process_group("nccl")
    print(f"{devices.count_devices()} devices")
    batch = torch.randn(8, 512, device="cuda")  # expect: DDP020
    for _ in range(steps):
        model(batch)
