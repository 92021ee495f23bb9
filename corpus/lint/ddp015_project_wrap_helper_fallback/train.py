"""Detector-style trainer: DDP through a project helper when launched with torchrun, a
DataParallel fallback (with a warning) when started as one process on several GPUs."""
import logging
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from utils.torch_utils import select_device, smart_ddp

LOCAL_RANK = int(os.getenv("LOCAL_RANK", -1))
RANK = int(os.getenv("RANK", -1))
LOGGER = logging.getLogger(__name__)


def train(epochs=50, batch_size=64):
    device = select_device(LOCAL_RANK)
    if LOCAL_RANK != -1:
        dist.init_process_group("nccl")
    model = nn.Sequential(nn.Conv2d(3, 16, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 5))
    model = model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.937)
    cuda = device.type != "cpu"
    if cuda and RANK == -1 and torch.cuda.device_count() > 1:
        LOGGER.warning("DataParallel is not recommended, use torchrun for multi-GPU training")
        model = nn.DataParallel(model)
    if cuda and RANK != -1:
        model = smart_ddp(model)
    data = TensorDataset(torch.randn(4000, 3, 64, 64), torch.randint(0, 5, (4000,)))
    sampler = None if RANK == -1 else DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=batch_size, shuffle=sampler is None, sampler=sampler)
    for epoch in range(epochs):
        if RANK != -1:
            loader.sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.to(device, non_blocking=True), y.to(device)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    if RANK != -1:
        dist.destroy_process_group()


if __name__ == "__main__":
    train()
