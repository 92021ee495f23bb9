"""A ZeRO smoke test spawned as a world of one process on gloo: no gradient ever crosses
a link, so the backend costs nothing here."""
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.distributed.optim import ZeroRedundancyOptimizer
from torch.nn.parallel import DistributedDataParallel as DDP


def example(rank, world_size):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "29512"
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    model = DDP(nn.Linear(64, 64).to(rank), device_ids=[rank])
    optimizer = ZeroRedundancyOptimizer(
        model.parameters(), optimizer_class=torch.optim.Adam, lr=0.01
    )
    loss = model(torch.randn(16, 64, device=rank)).sum()
    loss.backward()
    optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    world_size = 1
    mp.spawn(example, args=(world_size,), nprocs=world_size, join=True)
