"""A detection trainer that only steps on finite losses: a rank whose loss is infinite
never calls `backward()`, while the others wait for it in DDP's gradient all-reduce."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def train(detector, loader, epochs):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(detector.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    for epoch in range(epochs):
        loader.sampler.set_epoch(epoch)
        for images, targets in loader:
            losses = model(images.cuda(), targets)
            loss = sum(losses.values())
            if torch.isfinite(loss):
                optimizer.zero_grad()
                loss.backward()  # expect: DDP011
                optimizer.step()
            else:
                print(f"rank {dist.get_rank()}: non-finite loss, step skipped")
