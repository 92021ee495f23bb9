"""Gradient accumulation in a job that averages gradients itself: four local micro-batches, then
one all-reduce per gradient and one step (the hand-made ``no_sync``). Exit 0."""

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
torch.manual_seed(1 + rank)
for step in range(40):
    model(torch.randn(4, 8)).square().mean().backward()
    if step % 4 != 3:
        continue  # accumulate locally
    for p in model.parameters():
        dist.all_reduce(p.grad)
        p.grad /= 4 * world
    opt.step()
    opt.zero_grad()
print(f"rank {rank} accumulated done")
dist.destroy_process_group()
