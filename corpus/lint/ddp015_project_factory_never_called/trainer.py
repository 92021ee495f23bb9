"""Wraps the model in DDP; the DataParallel factory it imports is never called."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

from parallel import DataParallel


class Trainer:
    def __init__(self, model):
        self.local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(self.local_rank)
        dist.init_process_group("nccl")
        self.model = DDP(model.cuda(), device_ids=[self.local_rank])
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def step(self, x):
        self.opt.zero_grad()
        self.model(x.cuda()).sum().backward()
        self.opt.step()


if __name__ == "__main__":
    trainer = Trainer(nn.Linear(8, 8))
    for _ in range(10):
        trainer.step(torch.randn(4, 8))
