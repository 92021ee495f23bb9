"""A small Trainer class that wraps the model at the end of its constructor.
DDP keeps the module's own parameters, so an optimizer built before the wrap is fine
(pytorch#59147): nothing to report."""
import os

import torch
import torch.distributed as dist
from torch import nn, optim
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Trainer:
    def __init__(self, model, dataset, local_rank, lr=3e-4):
        self.local_rank = local_rank
        self.model = model.to(local_rank)
        self.optimizer = optim.AdamW(self.model.parameters(), lr=lr)
        self.sampler = DistributedSampler(dataset, drop_last=True)
        self.loader = DataLoader(dataset, batch_size=32, sampler=self.sampler)
        self.model = DistributedDataParallel(self.model, device_ids=[local_rank])

    def run_epoch(self, epoch):
        self.sampler.set_epoch(epoch)
        for source, targets in self.loader:
            source, targets = source.to(self.local_rank), targets.to(self.local_rank)
            loss = nn.functional.cross_entropy(self.model(source), targets)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

    def train(self, max_epochs):
        for epoch in range(max_epochs):
            self.run_epoch(epoch)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    dataset = TensorDataset(torch.randn(2048, 20), torch.randint(0, 3, (2048,)))
    trainer = Trainer(nn.Linear(20, 3), dataset, local_rank)
    trainer.train(max_epochs=5)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
