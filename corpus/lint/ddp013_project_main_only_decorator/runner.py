"""A runner whose checkpoint save is decorated with the project's `leader_only` (rank 0
only); the timing decorator on the metrics dump gates nothing, so every rank writes it."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from dist_helpers import leader_only, timed


class Runner:
    def __init__(self, out_dir):
        dist.init_process_group("nccl")
        self.local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(self.local_rank)
        self.model = DDP(nn.Linear(16, 2).cuda(), device_ids=[self.local_rank])
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
        data = TensorDataset(torch.randn(1024, 16), torch.randint(0, 2, (1024,)))
        self.sampler = DistributedSampler(data, drop_last=True)
        self.loader = DataLoader(data, batch_size=32, sampler=self.sampler)
        self.out_dir = out_dir

    @leader_only
    def _save_checkpoint(self, epoch):
        state = {"model": self.model.module.state_dict(), "epoch": epoch}
        torch.save(state, os.path.join(self.out_dir, f"checkpoint_{epoch}.pt"))

    @timed
    def _save_optimizer(self, epoch):
        state = {"optimizer": self.optimizer.state_dict(), "epoch": epoch}
        torch.save(state, os.path.join(self.out_dir, f"optimizer_{epoch}.pt"))

    def train(self, epochs):
        for epoch in range(epochs):
            self.sampler.set_epoch(epoch)
            for x, y in self.loader:
                loss = nn.functional.cross_entropy(self.model(x.cuda()), y.cuda())
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            self._save_checkpoint(epoch)
            self._save_optimizer(epoch)  # expect: DDP013
            dist.barrier()


if __name__ == "__main__":
    Runner("checkpoints").train(10)
