"""A run refuses to overwrite an existing experiment, but only rank 0 checks: it returns before
the process group starts, and the other ranks wait in init_process_group for it."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def experiment_exists(root, name):
    return os.path.isdir(os.path.join(root, name))


def main(root, name, loader, epochs):
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ["LOCAL_RANK"])
    if rank == 0:
        if experiment_exists(root, name):
            print(f"{name} exists already: pick another name")
            return 1  # expect: DDP047
        os.makedirs(os.path.join(root, name))
    dist.init_process_group("nccl")
    torch.cuda.set_device(local_rank)
    model = DDP(nn.Linear(32, 4).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(epochs):
        for features, labels in loader:
            loss = nn.functional.cross_entropy(model(features.cuda()), labels.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    raise SystemExit(main("runs", "baseline", [], 1))
