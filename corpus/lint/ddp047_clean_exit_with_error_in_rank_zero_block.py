"""Rank 0 validates the data it is about to train on and stops the job with an error code
when it is corrupt: torchrun then ends every rank."""

import os
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def train(net, loader, epochs):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(net.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for epoch in range(epochs):
        loader.sampler.set_epoch(epoch)
        for images, labels in loader:
            if local_rank == 0 and not torch.isfinite(images).all():
                print("non-finite input", file=sys.stderr)
                sys.exit(1)
            loss = torch.nn.functional.cross_entropy(model(images.cuda()), labels.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
