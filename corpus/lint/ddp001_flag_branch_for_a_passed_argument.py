"""The twin of ddp001_clean_branch_for_an_unpassed_argument: here the caller passes the
profiling switch from the command line, so the branch that pins every process to GPU 0
can run."""

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def _device(local_rank, pin_first_gpu=False):
    if pin_first_gpu:
        return torch.device("cuda:0")  # expect: DDP001
    torch.cuda.set_device(local_rank)
    return torch.device("cuda", local_rank)


def main(model, loader, optimizer, epochs, profile):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    device = _device(local_rank, pin_first_gpu=profile)
    model = DDP(model.to(device), device_ids=[local_rank])
    for _ in range(epochs):
        for inputs, targets in loader:
            loss = torch.nn.functional.cross_entropy(model(inputs.to(device)), targets.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()
