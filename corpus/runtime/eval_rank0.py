"""Rank 0 evaluates through the DDP wrapper (eval mode without no_grad, and under no_grad),
then every rank meets in a barrier. Legal: the replicas stay equal. Exit 0."""

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
model = DDP(torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1)))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(12):
    loss = model(torch.randn(4, 8)).square().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 3 == 2:
        if rank == 0:
            model.eval()
            score = model(torch.randn(16, 8)).mean()  # gradients enabled, no backward
            model.train()
            with torch.no_grad():
                score = score + model(torch.randn(16, 8)).mean()
            print(f"eval after step {step}: {score.item():.3f}")
        dist.barrier()
dist.destroy_process_group()
