"""With a user comm hook registered, a rank that skips backward is still caught."""

import time

import torch
import torch.distributed as dist
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
model = DDP(torch.nn.Linear(8, 1))
model.register_comm_hook(dist.group.WORLD, default_hooks.fp16_compress_hook)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(6):
    loss = model(torch.randn(4, 8)).mean()
    if rank == 0 and step == 2:
        print(f"FAULT {time.time()}", flush=True)
        continue
    loss.backward()  # line:backward
    opt.step()
    opt.zero_grad()
dist.destroy_process_group()
