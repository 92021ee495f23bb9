"""The twin of `ddp017_clean_wrap_in_dead_branch.py` with a world size that is not always
one: read from the launcher, or `2` on one path, so the wrap under `if world_size > 1:`
runs and the model's BatchNorm layers are per rank."""
import os

import torch
import torch.distributed as dist
import torchvision
from torch.nn.parallel import DistributedDataParallel as DDP


def benchmark(model, steps):
    x = torch.randn(8, 3, 224, 224).cuda()
    for _ in range(steps):
        model(x).sum().backward()


def main(pair=False):
    world_size = 1
    if pair:
        world_size = 2
    model = torchvision.models.resnet18()
    if world_size > 1:
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        dist.init_process_group("nccl")
        model = DDP(model.cuda(), device_ids=[local_rank])  # expect: DDP017
    benchmark(model, 10)


def launched():
    world_size = int(os.environ["WORLD_SIZE"])
    model = torchvision.models.resnet34()
    if world_size > 1:
        local_rank = int(os.environ["LOCAL_RANK"])
        model = DDP(model.cuda(local_rank), device_ids=[local_rank])  # expect: DDP017
    benchmark(model, 10)


if __name__ == "__main__":
    main()
    launched()
