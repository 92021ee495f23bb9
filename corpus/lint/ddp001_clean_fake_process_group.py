"""Tracing a job of eight ranks in one process: the "fake" backend only simulates the other
ranks, so the one real process may take GPU 0."""

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.device_mesh import init_device_mesh


def trace(world_size=8):
    dist.init_process_group("fake", rank=0, world_size=world_size)
    device = torch.device("cuda:0")
    torch.cuda.set_device(device)
    mesh = init_device_mesh("cuda", (world_size,))
    model = nn.Linear(64, 64).to(device)
    compiled = torch.compile(model)
    compiled(torch.randn(4, 64, device=device))
    return mesh
