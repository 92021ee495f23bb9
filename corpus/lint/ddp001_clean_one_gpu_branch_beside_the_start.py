"""With several GPUs the script starts a process group and places the model on its local
rank; with one GPU it runs as a single process on `cuda:0`. The literal belongs to the
branch that starts no job."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def setup_distributed():
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))


def train(steps=100):
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    if torch.cuda.device_count() > 1:  # expect: DDP029
        setup_distributed()
        device = torch.device(f"cuda:{local_rank}")
    else:
        device = torch.device("cuda:0")
    model = nn.Linear(10, 10).to(device)
    if dist.is_initialized():
        model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(steps):
        loss = model(torch.randn(8, 10, device=device)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    train()
