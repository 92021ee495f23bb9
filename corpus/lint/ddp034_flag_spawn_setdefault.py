"""mp.spawn launcher that defaults the visible GPUs to one constant device before
starting `--world-size` workers, each of which selects the GPU of its spawn index."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

GPU = "1"


def run(index, world_size):
    torch.cuda.set_device(index)
    dist.init_process_group("nccl", init_method="tcp://localhost:23456",
                            rank=index, world_size=world_size)
    model = DDP(nn.Linear(20, 1).cuda(index), device_ids=[index])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for _ in range(200):
        x = torch.randn(64, 20, device=f"cuda:{index}")
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--world-size", type=int, default=2)
    args = parser.parse_args()
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", GPU)  # expect: DDP034
    mp.spawn(run, args=(args.world_size,), nprocs=args.world_size)
