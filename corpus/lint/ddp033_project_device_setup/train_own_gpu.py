"""Spawns one worker per GPU and shows each only its own: `cuda:0` is a different device in
every worker, so loading without `map_location` is harmless here."""
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def worker(gpu, world_size):
    os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu)
    dist.init_process_group("nccl", rank=gpu, world_size=world_size)
    net = nn.Linear(64, 64).cuda()
    if os.path.exists("last.pth"):
        net.load_state_dict(torch.load("last.pth"))
    model = DDP(net, device_ids=[0])
    for step in range(100):
        model(torch.randn(8, 64).cuda()).sum().backward()
    if gpu == 0:
        torch.save(net.state_dict(), "last.pth")  # expect-preview: DDP014


if __name__ == "__main__":
    os.environ.setdefault("MASTER_ADDR", "localhost")
    os.environ.setdefault("MASTER_PORT", "29500")
    mp.spawn(worker, args=(4,), nprocs=4)
