"""Protein-design trainer whose backward helper skips a batch that runs out of memory only
when the model is not wrapped for a distributed job: `torchrun --nproc_per_node=4
train.py` trains through DDP, where an OOM must end the job."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel


def safe_backward(loss, model):
    if isinstance(model, DistributedDataParallel):
        loss.backward()  # every rank must meet the gradient all-reduce: no skipping
        return True
    try:
        loss.backward()
        return True
    except RuntimeError as error:
        if "out of memory" not in str(error):
            raise
        torch.cuda.empty_cache()
        return False


def main():
    distributed = "WORLD_SIZE" in os.environ
    model = nn.Sequential(nn.Linear(128, 512), nn.GELU(), nn.Linear(512, 20)).cuda()
    if distributed:
        dist.init_process_group("nccl")
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        model = DistributedDataParallel(model.cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-4)
    for step in range(1000):
        x, y = torch.randn(64, 128).cuda(), torch.randint(0, 20, (64,)).cuda()
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        if safe_backward(loss, model):
            optimizer.step()
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
