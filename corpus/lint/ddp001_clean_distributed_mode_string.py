"""One trainer, three modes chosen by a string: `data_parallel_ddp` spawns one process per
GPU and joins the group, `single_gpu` and `local` run one process. The hard-coded GPU 0
is only in the branches of the one-process modes."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def build(distributed, rank):
    model = nn.Sequential(nn.Linear(512, 512), nn.GELU(), nn.Linear(512, 100))
    if distributed == "data_parallel_ddp":
        device = torch.device("cuda", rank)
        model = DDP(model.to(device), device_ids=[rank])
    elif distributed == "single_gpu":
        device = torch.device("cuda:0")
        model = model.to(device)
    else:
        device = torch.device("cpu")
    return model, device


def run(rank, world_size, distributed, steps):
    if distributed == "data_parallel_ddp":
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29511")
        dist.init_process_group("nccl", rank=rank, world_size=world_size)
    model, device = build(distributed, rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(steps):
        x = torch.randn(32, 512, device=device)
        loss = model(x).logsumexp(dim=1).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    if distributed == "data_parallel_ddp":
        dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--distributed", choices=["data_parallel_ddp", "single_gpu", "local"])
    parser.add_argument("--steps", type=int, default=100)
    args = parser.parse_args()
    if args.distributed == "data_parallel_ddp":
        n = torch.cuda.device_count()
        mp.spawn(run, args=(n, args.distributed, args.steps), nprocs=n)
    else:
        run(0, 1, args.distributed, args.steps)
