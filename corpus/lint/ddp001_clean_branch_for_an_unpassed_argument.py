"""A private device helper with a profiling switch that no call turns on: the branch that
pins every process to GPU 0 needs `pin_first_gpu=True`, which no caller passes, so it never
runs; every process takes the GPU of its local rank."""

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def _device(local_rank, pin_first_gpu=False):
    if pin_first_gpu:
        return torch.device("cuda:0")
    torch.cuda.set_device(local_rank)
    return torch.device("cuda", local_rank)


def main(model, loader, optimizer, epochs):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    device = _device(local_rank)
    model = DDP(model.to(device), device_ids=[local_rank])
    for _ in range(epochs):
        for inputs, targets in loader:
            loss = torch.nn.functional.cross_entropy(model(inputs.to(device)), targets.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()
