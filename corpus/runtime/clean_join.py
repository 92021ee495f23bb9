"""Uneven inputs handled correctly with the Join context manager: no report, exit 0."""

import torch
import torch.distributed as dist
from torch.distributed.algorithms.join import Join
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
model = DDP(torch.nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
with Join([model]):
    for _ in range(5 + 3 * rank):
        model(torch.randn(4, 8)).mean().backward()
        opt.step()
        opt.zero_grad()
dist.destroy_process_group()
