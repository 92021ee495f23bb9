"""Logs embedding statistics through model.module under no_grad; trains through the wrapper."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(40, 80), nn.ReLU())
        self.classifier = nn.Linear(80, 8)

    def forward(self, x):
        return self.classifier(self.encoder(x))


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)

    data = TensorDataset(torch.randn(4096, 40), torch.randint(0, 8, (4096,)))
    probe = torch.randn(64, 40, device=device)
    model = DDP(Net().to(device), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=64, sampler=sampler)

    for epoch in range(4):
        sampler.set_epoch(epoch)
        for x, y in loader:
            logits = model(x.to(device))
            loss = nn.functional.cross_entropy(logits, y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        with torch.no_grad():
            emb = model.module.encoder(probe)
            logits = model.module(probe)
            stats = torch.stack([emb.norm(dim=1).mean(), logits.softmax(-1).max(-1).values.mean()])
        dist.all_reduce(stats)
        stats /= dist.get_world_size()
        if dist.get_rank() == 0:
            print(f"epoch {epoch}: emb norm {stats[0]:.3f} confidence {stats[1]:.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
