"""Culprit: the loss is divided by the world size before backward(); DDP already averages
gradients, so every gradient shrinks by the world size."""

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

GLOBAL_BATCH = 24

dist.init_process_group("gloo")
world_size = dist.get_world_size()
torch.manual_seed(0)
data = TensorDataset(torch.randn(96, 8), torch.randn(96, 1))
sampler = DistributedSampler(data, shuffle=True, seed=0)
loader = DataLoader(data, batch_size=GLOBAL_BATCH // world_size, sampler=sampler)
model = DDP(torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1)))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    sampler.set_epoch(epoch)
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        (loss / world_size).backward()  # line:backward
        optimizer.step()
dist.destroy_process_group()
