"""A trainer class whose epoch method sets the sampler's epoch itself."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Trainer:
    def __init__(self, model, train_loader, local_rank):
        self.model = model
        self.train_loader = train_loader
        self.local_rank = local_rank
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

    def train_epoch(self, epoch):
        self.train_loader.sampler.set_epoch(epoch)
        for x, y in self.train_loader:
            x, y = x.cuda(self.local_rank), y.cuda(self.local_rank)
            loss = nn.functional.cross_entropy(self.model(x), y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

    def fit(self, epochs):
        for epoch in range(epochs):
            self.train_epoch(epoch)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    train_set = TensorDataset(torch.randn(1024, 6), torch.randint(0, 3, (1024,)))
    loader = DataLoader(
        train_set, batch_size=32, sampler=DistributedSampler(train_set, drop_last=True)
    )
    model = DDP(nn.Linear(6, 3).cuda(local_rank), device_ids=[local_rank])
    Trainer(model, loader, local_rank).fit(epochs=12)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
