"""The trainer decides who writes through a property: with sharded state every rank owns
its shard, otherwise only the first data-parallel rank writes."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Trainer:
    def __init__(self, model, sharded_state=False):
        self.model = model
        self.sharded_state = sharded_state
        self.dp_rank = dist.get_rank()
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

    @property
    def writes_checkpoint(self):
        if self.sharded_state:
            return True
        return self.dp_rank == 0

    def step(self, batch):
        loss = self.model(batch).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()

    def save_checkpoint(self, filename):
        if self.writes_checkpoint:
            state = {"model": self.model.module.state_dict(), "optim": self.optimizer.state_dict()}
            torch.save(state, filename)


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    trainer = Trainer(DDP(nn.Linear(32, 32).cuda(), device_ids=[local_rank]))
    for epoch in range(5):
        for _ in range(100):
            trainer.step(torch.randn(16, 32, device="cuda"))
        trainer.save_checkpoint(f"checkpoint{epoch}.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
