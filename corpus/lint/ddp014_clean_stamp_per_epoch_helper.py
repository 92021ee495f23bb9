"""Each epoch's snapshot gets its own file: the helper stamps the name when it runs, and
it runs once per epoch, so no save overwrites another."""
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def save_snapshot(model, root):
    stamp = time.strftime("%Y%m%d-%H%M%S")
    name = os.path.join(root, f"snapshot-{stamp}.pt")
    torch.save(model.module.state_dict(), name)


def main(root="snapshots", epochs=10):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(nn.Linear(8, 8).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters())
    for epoch in range(epochs):
        loss = model(torch.randn(4, 8).cuda()).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if dist.get_rank() == 0:
            save_snapshot(model, root)


if __name__ == "__main__":
    main()
