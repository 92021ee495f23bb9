"""Uses static_graph=True (the head is skipped the same way every step) and reads the
find_unused_parameters switch from the experiment config instead of hard-coding it."""
import json
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Encoder(nn.Module):
    def __init__(self, use_head):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64))
        self.head = nn.Linear(64, 64)
        self.use_head = use_head

    def forward(self, x):
        x = self.body(x)
        return self.head(x) if self.use_head else x


def main():
    with open(sys.argv[1]) as f:
        cfg = json.load(f)
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = Encoder(cfg["use_head"]).cuda(local_rank)
    model = DDP(
        model,
        device_ids=[local_rank],
        static_graph=cfg.get("static_graph", True),
        find_unused_parameters=cfg.get("find_unused_parameters", False),
    )
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    data = TensorDataset(torch.randn(4096, 32), torch.randn(4096, 64))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=128, sampler=sampler)
    for epoch in range(5):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.cuda(local_rank), y.cuda(local_rank)
            loss = nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
