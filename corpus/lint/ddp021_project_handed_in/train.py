"""Hands the DDP wrapper to `engine.validate`, which runs it on rank 0 alone; `engine.sample`
gets the bare module."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from engine import sample, validate
from network import Detector


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    model = DDP(Detector().to(device), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    val_loader = [(torch.randn(4, 3, 64, 64), torch.randn(4, 4)) for _ in range(8)]
    for epoch in range(12):
        for _ in range(100):
            loss = model(torch.randn(16, 3, 64, 64, device=device)).square().mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        validate(model, val_loader, device)
        sample(model.module, device)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
