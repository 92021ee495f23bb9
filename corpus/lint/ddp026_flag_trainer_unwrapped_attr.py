"""A Trainer class whose contrastive step reaches the bare module through getattr."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Encoder(nn.Module):
    def __init__(self, dim=32, out=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, 64), nn.ReLU(), nn.Linear(64, out))

    def forward(self, x):
        return nn.functional.normalize(self.net(x), dim=-1)


class Trainer:
    def __init__(self, local_rank, dataset):
        self.device = torch.device("cuda", local_rank)
        self.model = DDP(Encoder().to(self.device), device_ids=[local_rank])
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-3)
        self.sampler = DistributedSampler(dataset, shuffle=True, drop_last=True)
        self.loader = DataLoader(dataset, batch_size=128, sampler=self.sampler)

    def step(self, a, b, temperature=0.1):
        encoder = getattr(self.model, "module", self.model)
        za = encoder(a)  # expect: DDP026
        zb = self.model.module.forward(b)  # expect: DDP026
        logits = za @ zb.t() / temperature
        loss = nn.functional.cross_entropy(logits, torch.arange(len(a), device=self.device))
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def fit(self, epochs):
        for epoch in range(epochs):
            self.sampler.set_epoch(epoch)
            for (x,) in self.loader:
                x = x.to(self.device)
                last = self.step(x + 0.05 * torch.randn_like(x), x)
            if dist.get_rank() == 0:
                print(f"epoch {epoch} loss {last:.3f}")


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    Trainer(local_rank, TensorDataset(torch.randn(8192, 32))).fit(5)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
