"""Trains the network through DDP and saves the wrapper's state dict, `module.` keys and
all: the project's own inference tool (tools/infer.py, in a sibling folder) strips the
prefix when it loads, and builds the same network the trainer imports through
`engine`."""

import os
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

sys.path.append(".")
from engine import build_network


def main(args, loader):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    model = DistributedDataParallel(build_network(args).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for images, masks in loader:
        loss = torch.nn.functional.cross_entropy(model(images.cuda()), masks.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    if dist.get_rank() == 0:
        torch.save(model.state_dict(), os.path.join(args.work_dir, "final.pth"))
