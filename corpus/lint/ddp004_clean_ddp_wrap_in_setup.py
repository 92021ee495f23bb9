"""Trainer whose constructor builds the optimizer; the wrap happens later, in setup().
DDP keeps the module's own parameters, so an optimizer built before the wrap is fine
(pytorch#59147): nothing to report."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Trainer:
    def __init__(self, model, train_set, lr=3e-4):
        self.local_rank = int(os.environ["LOCAL_RANK"])
        self.model = model.cuda(self.local_rank)
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=lr)
        self.sampler = DistributedSampler(train_set, shuffle=True, drop_last=True)
        self.loader = DataLoader(train_set, batch_size=32, sampler=self.sampler, num_workers=2)

    def setup(self):
        self.model = DDP(self.model, device_ids=[self.local_rank])

    def train(self, epochs):
        for epoch in range(epochs):
            self.sampler.set_epoch(epoch)
            for x, y in self.loader:
                x, y = x.cuda(self.local_rank), y.cuda(self.local_rank)
                loss = nn.functional.mse_loss(self.model(x), y)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()


def main():
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    dist.init_process_group("nccl")
    data = TensorDataset(torch.randn(2048, 10), torch.randn(2048, 1))
    trainer = Trainer(nn.Linear(10, 1), data)
    trainer.setup()
    trainer.train(5)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
