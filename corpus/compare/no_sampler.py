"""Culprit: no DistributedSampler. Every rank shuffles the whole dataset with the same seed, so
every rank trains on the same samples in each step."""

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset

GLOBAL_BATCH = 24

dist.init_process_group("gloo")
world_size = dist.get_world_size()
torch.manual_seed(0)
data = TensorDataset(torch.randn(96, 8), torch.randn(96, 1))
loader = DataLoader(data, batch_size=GLOBAL_BATCH // world_size, shuffle=True)  # line:loader
model = DDP(torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1)))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
dist.destroy_process_group()
