"""The local rank from LOCAL_RANK, the global rank only as a fallback where the launcher set
none: a local-rank name holding a local value."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local_rank)
    model = DDP(nn.Linear(64, 10).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(10):
        loss = model(torch.randn(32, 64, device=f"cuda:{local_rank}")).square().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    if rank == 0:
        print("done")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
