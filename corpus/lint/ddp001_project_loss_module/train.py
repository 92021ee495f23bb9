"""Trains on every rank: the loss module it calls runs on every rank too."""

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from detect import draw  # noqa: F401  (imported for notebooks, never called here)
from detect.loss import BoxLoss


def main(net, loader, epochs=10):
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group("nccl")
    torch.cuda.set_device(local_rank)
    net = DDP(net.cuda(), device_ids=[local_rank])
    criterion = BoxLoss(net)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
    for _ in range(epochs):
        for images, targets in loader:
            loss = criterion(net(images.cuda()), targets.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
