"""A job that averages gradients itself, correctly: rank 0's initial parameters are broadcast,
each gradient is all-reduced (some through ``.data``, some asynchronously) and divided by the
world size, and the loss is all-reduced for the log. The replicas stay equal: exit 0."""

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(rank)  # different on each rank until the broadcast below
model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
for p in model.parameters():
    dist.broadcast(p.data, src=0)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(30):
    opt.zero_grad()
    loss = model(torch.randn(4, 8)).square().mean()
    loss.backward()
    first, *rest = list(model.parameters())
    dist.all_reduce(first.grad.data)
    handles = [dist.all_reduce(p.grad, async_op=True) for p in rest]
    for handle in handles:
        handle.wait()
    for p in model.parameters():
        p.grad /= world
    opt.step()
    logged = loss.detach().clone()
    dist.all_reduce(logged)
print(f"rank {rank} hand-averaged done")
dist.destroy_process_group()
