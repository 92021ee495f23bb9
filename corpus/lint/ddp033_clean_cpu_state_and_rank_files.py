"""Checkpoints moved to the CPU before saving, and per-rank shards each rank reads back
from its own GPU: loads without `map_location` that put nothing on another rank's GPU."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def cpu_state(module):
    return {k: v.detach().cpu() for k, v in module.state_dict().items()}


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    model = DDP(nn.Linear(10, 10).cuda(), device_ids=[local_rank])
    shard_path = f"state/optim_rank{rank}.pt"
    if os.path.exists("state/model.pt"):
        model.module.load_state_dict(torch.load("state/model.pt"))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    if os.path.exists(shard_path):
        optimizer.load_state_dict(torch.load(shard_path))
    for _ in range(10):
        loss = model(torch.randn(4, 10, device="cuda")).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    torch.save(optimizer.state_dict(), shard_path)
    if rank == 0:
        torch.save(cpu_state(model.module), "state/model.tmp")
        os.replace("state/model.tmp", "state/model.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
