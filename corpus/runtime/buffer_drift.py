"""With broadcast_buffers=False, rank 1 changes a registered buffer: it drifts unseen."""

import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


class Scaled(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 1)
        self.register_buffer("scale", torch.ones(1))

    def forward(self, x):
        return self.lin(x) * self.scale


dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
model = DDP(Scaled(), broadcast_buffers=False)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(40):
    model(torch.randn(4, 8)).mean().backward()
    if rank == 1 and step == 4:
        model.module.scale.fill_(2.0)
        print(f"FAULT {time.time()}", flush=True)
    opt.step()
    opt.zero_grad()
    time.sleep(0.05)
dist.destroy_process_group()
