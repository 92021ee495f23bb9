"""The device is the global rank modulo the GPUs of the node; the `--local_rank` argument
is documented as unused and nothing reads it. `models.__dict__[args.arch]` reads a
module's namespace, not the parsed arguments."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torchvision.models as models
from torch.nn.parallel import DistributedDataParallel as DDP

parser = argparse.ArgumentParser()
parser.add_argument("--arch", default="resnet50")
parser.add_argument("--local_rank", default=0, type=int, help="unused; kept for old launch commands")


def main():
    args = parser.parse_args()
    rank = int(os.environ["RANK"])
    dist.init_process_group("nccl", rank=rank, world_size=int(os.environ["WORLD_SIZE"]))
    gpu = rank % torch.cuda.device_count()
    torch.cuda.set_device(gpu)
    model = nn.SyncBatchNorm.convert_sync_batchnorm(models.__dict__[args.arch]())
    model = DDP(model.cuda(), device_ids=[gpu])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(10):
        optimizer.zero_grad()
        model(torch.randn(4, 3, 224, 224, device=gpu)).sum().backward()
        optimizer.step()


if __name__ == "__main__":
    main()
