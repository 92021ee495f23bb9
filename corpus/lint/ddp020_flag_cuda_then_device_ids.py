"""A GAN trainer class: the models move with `.cuda()` and DDP is told the rank's GPU,
but nothing sets the process's device, so every rank's models sit on GPU 0."""
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Trainer:
    def __init__(self, gpu_id, steps):
        self.gpu_id = gpu_id
        self.steps = steps
        self.generator = nn.Sequential(nn.Linear(64, 64), nn.Tanh()).cuda()  # expect: DDP020
        self.critic = nn.Linear(64, 1).cuda()  # expect: DDP020
        self.generator = DDP(self.generator, device_ids=[gpu_id])
        self.critic = DDP(self.critic, device_ids=[gpu_id])
        self.opt_g = torch.optim.Adam(self.generator.parameters(), lr=2e-4)

    def train(self):
        for _ in range(self.steps):
            z = torch.ones(16, 64, device=f"cuda:{self.gpu_id}")
            loss = -self.critic(self.generator(z)).mean()
            self.opt_g.zero_grad()
            loss.backward()
            self.opt_g.step()


def main(rank, world_size):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "12355"
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    Trainer(rank, steps=100).train()
    dist.destroy_process_group()


if __name__ == "__main__":
    world_size = torch.cuda.device_count()
    mp.spawn(main, args=(world_size,), nprocs=world_size)
