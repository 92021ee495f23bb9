"""Garment-pattern regression: the trainer reads the wrapper's training and validation
loaders only."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import TensorDataset

from data.wrapper import DataWrapper


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    wrapper = DataWrapper(TensorDataset(torch.randn(8000, 64), torch.randn(8000, 8)), 32)
    wrapper.new_loaders()
    model = DDP(nn.Linear(64, 8).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(50):
        for x, y in wrapper.loaders.train:
            loss = nn.functional.mse_loss(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        with torch.no_grad():
            total = torch.zeros(2, device="cuda")
            for x, y in wrapper.loaders.validation:
                total += torch.stack([nn.functional.mse_loss(model(x.cuda()), y.cuda(), reduction="sum"), torch.tensor(float(len(y)), device="cuda")])
            dist.all_reduce(total)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
