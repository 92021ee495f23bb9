"""Rank 0 reloads an exponential-moving-average snapshot into the wrapped model between
stages, then broadcasts every parameter and buffer from rank 0 before training on."""

import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def broadcast_state(module):
    for tensor in list(module.parameters()) + list(module.buffers()):
        dist.broadcast(tensor.data, src=0)


def main():
    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(nn.Sequential(nn.Linear(12, 12), nn.LayerNorm(12)).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for stage in range(3):
        if dist.get_rank() == 0 and os.path.exists(f"ema_{stage}.pt"):
            model.module.load_state_dict(torch.load(f"ema_{stage}.pt", map_location="cpu"))
        broadcast_state(model.module)
        for _ in range(50):
            loss = model(torch.randn(8, 12, device="cuda")).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
