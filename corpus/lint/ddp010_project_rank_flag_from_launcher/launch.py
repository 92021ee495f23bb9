"""Entry point: sets up the process group, then decides once which process reports."""

import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from loop import fit
from nets import SmallNet, make_loaders

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=30)
parser.add_argument("--lr", type=float, default=0.1)
parser.add_argument("--ddp", action="store_true")
parser.add_argument("--out", default="runs/best.pt")


def main():
    args = parser.parse_args()
    model = SmallNet()
    if args.ddp:
        dist.init_process_group("nccl")
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        model = DistributedDataParallel(model.cuda(), device_ids=[local_rank])
        # one process prints and writes files
        args.reporter = True if int(os.environ["RANK"]) == 0 else False
    else:
        model = model.cuda()
        args.reporter = True
    loaders = make_loaders(args)
    fit(model, loaders, args)
    if args.ddp:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
