"""An ensemble in a process group: each rank trains its own member (seeded by rank) and only the
losses are all-reduced, for the log. The members differ by design: exit 0."""

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(rank)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for _ in range(30):
    loss = model(torch.randn(4, 8)).square().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    mean = loss.detach()
    dist.all_reduce(mean)
print(f"member {rank} trained, mean loss {mean.item() / dist.get_world_size():.3f}")
dist.destroy_process_group()
