"""A job that averages gradients itself (no DDP wrapper): every rank all-reduces each gradient,
but only rank 0 divides the sum by the world size. Rank 1 steps with gradients twice as large and
its parameters silently drift away from rank 0's."""

import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(0)  # the same initial parameters on every rank
model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
torch.manual_seed(1 + rank)  # each rank its own batches
print(f"FAULT {time.time()}", flush=True)
for step in range(40):
    opt.zero_grad()
    model(torch.randn(4, 8)).square().mean().backward()
    for p in model.parameters():
        dist.all_reduce(p.grad)  # line:reduce
        if rank == 0:
            p.grad /= world
    opt.step()
    time.sleep(0.05)
dist.destroy_process_group()
