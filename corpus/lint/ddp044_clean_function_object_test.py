"""`if is_main_process:` names the function without calling it: a function object is
always true, so every rank loads the weights (a bug of its own, but not a load on rank 0
only, and nothing that makes the replicas differ)."""

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def is_main_process():
    return dist.get_rank() == 0


def evaluate(net, path, loader):
    if is_main_process:  # expect: DDP065
        net.load_state_dict(torch.load(path, map_location="cpu"))
    dist.barrier()
    correct = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (net(x.cuda()).argmax(1) == y.cuda()).sum().item()
    return correct


def main(net, loader, path="model.pt"):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    net = DDP(net.cuda(), device_ids=[local_rank])
    print(evaluate(net, path, loader))
