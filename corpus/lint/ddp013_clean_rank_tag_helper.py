"""Sharded optimizer state: every rank writes its own file, named by a small helper that
returns a tag holding the rank, and opened as a file handle."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.optim import ZeroRedundancyOptimizer
from torch.nn.parallel import DistributedDataParallel as DDP


def shard_suffix():
    return f"shard{dist.get_rank():03d}"


def dump_optimizer_shard(optimizer, folder, step):
    basename = f"optim_{step}.{shard_suffix()}.pt"
    target = os.path.join(folder, basename)
    with open(target, "wb") as handle:
        torch.save(optimizer.state_dict(), handle)


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(nn.Linear(128, 128).cuda(), device_ids=[local_rank])
    optimizer = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=torch.optim.Adam, lr=1e-4)
    for step in range(1, 1001):
        loss = model(torch.randn(8, 128, device="cuda")).square().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 500 == 0:
            dump_optimizer_shard(optimizer, "ckpt", step)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
