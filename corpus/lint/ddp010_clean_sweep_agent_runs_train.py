"""Hyperparameter sweep: rank 0 asks the sweep agent for a configuration and the agent
calls `trainer.train`; the other ranks call it directly. Every rank runs the same
training loop, and so the same all-reduces."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import wandb
from torch.nn.parallel import DistributedDataParallel as DDP


class Trainer:
    def __init__(self, local_rank, epochs):
        self.model = DDP(nn.Linear(32, 1).cuda(), device_ids=[local_rank])
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.01)
        self.epochs = epochs

    def train(self):
        for _ in range(self.epochs):
            self.opt.zero_grad()
            loss = self.model(torch.randn(64, 32, device="cuda")).pow(2).mean()
            loss.backward()
            self.opt.step()
            dist.all_reduce(loss.detach())


def main(sweep_id=None):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    trainer = Trainer(local_rank, epochs=5)
    if sweep_id and dist.get_rank() == 0:
        wandb.agent(sweep_id, function=trainer.train, count=1)
    else:
        trainer.train()
    dist.destroy_process_group()


if __name__ == "__main__":
    main(os.environ.get("SWEEP_ID"))
