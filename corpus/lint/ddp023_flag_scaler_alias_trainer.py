"""A small trainer class; bf16 autocast through an aliased import, scaler via torch.GradScaler."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.cuda.amp import autocast as amp_autocast
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Trainer:
    def __init__(self, net, dataset, local_rank):
        self.device = torch.device("cuda", local_rank)
        self.model = DDP(net.to(self.device), device_ids=[local_rank])
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.01, momentum=0.9)
        self.scaler = torch.GradScaler("cuda", enabled=True)  # expect: DDP023
        self.sampler = DistributedSampler(dataset, shuffle=True, drop_last=True)
        self.loader = DataLoader(dataset, batch_size=64, sampler=self.sampler)

    def step(self, x, y):
        with amp_autocast(dtype=torch.bfloat16):
            loss = nn.functional.cross_entropy(self.model(x), y)
        self.optimizer.zero_grad()
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        return loss.item()

    def fit(self, epochs):
        for epoch in range(epochs):
            self.sampler.set_epoch(epoch)
            for x, y in self.loader:
                last = self.step(x.to(self.device), y.to(self.device))
            if dist.get_rank() == 0:
                print(f"epoch {epoch} loss {last:.3f}")


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    data = TensorDataset(torch.randn(4096, 100), torch.randint(0, 10, (4096,)))
    Trainer(nn.Sequential(nn.Linear(100, 10)), data, local_rank).fit(5)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
