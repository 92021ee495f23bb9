"""A skip meant for a diverged loss, written so that it never fires: a NaN loss is neither
larger nor smaller than any number, so `isnan(loss) and loss.item() > 16` never holds and
no rank skips its backward. (The bare `except` that continues after a failed step is a
real skip.)"""

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def train(model, loader, epochs):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    model = DDP(model.cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    for _ in range(epochs):
        for images, targets in loader:
            loss = model(images.cuda(), targets.cuda())
            if torch.isnan(loss).any() and loss.item() > 16.0:
                continue
            if float(loss) < 0 and torch.isnan(loss):
                continue
            try:
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            except Exception:
                continue  # expect: DDP011
