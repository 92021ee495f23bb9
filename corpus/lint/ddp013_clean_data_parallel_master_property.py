"""A trainer that may also shard its model across processes: who writes the checkpoint is
decided by properties, two levels deep. With sharded state every rank writes its own shard
(a per-rank suffix); otherwise only the first data-parallel rank writes."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

from parallel_state import get_data_parallel_rank


class Trainer:
    def __init__(self, model, world_size, sharded_state=False):
        self.model = DDP(model)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-4)
        self.world_size = world_size
        self.sharded_state = sharded_state

    @property
    def data_parallel_rank(self):
        if self.world_size == 1:
            return 0
        return get_data_parallel_rank()

    @property
    def is_data_parallel_master(self):
        return self.data_parallel_rank == 0

    @property
    def writes_checkpoint_here(self):
        if self.sharded_state:
            return True
        return self.is_data_parallel_master

    def state_dict(self):
        return {"model": self.model.module.state_dict(), "optim": self.optimizer.state_dict()}

    def save_checkpoint(self, filename):
        if self.writes_checkpoint_here:
            state = self.state_dict()
            suffix = f"-shard{self.data_parallel_rank}" if self.sharded_state else ""
            torch.save(state, filename + suffix)

    def train_step(self, batch):
        loss = self.model(batch).square().mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()


def main():
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    trainer = Trainer(nn.Linear(128, 128).cuda(), dist.get_world_size())
    for epoch in range(4):
        for _ in range(200):
            trainer.train_step(torch.randn(8, 128, device="cuda"))
        trainer.save_checkpoint(f"checkpoint{epoch}.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
