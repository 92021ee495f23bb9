"""Vacuous: a regression head with one output trained with cross-entropy. A softmax over one
class is 1 whatever the input, so the loss is exactly 0 and no gradient flows: the runs agree at
every step because nothing can differ. `guards compare` says so (exit status 3)."""

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group("gloo")
world = dist.get_world_size()
torch.manual_seed(0)
data = TensorDataset(torch.rand(128, 10), torch.rand(128, 1))
sampler = DistributedSampler(data, seed=0)
loader = DataLoader(data, batch_size=16 // world, sampler=sampler)
model = DDP(torch.nn.Linear(10, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for epoch in range(4):
    sampler.set_epoch(epoch)
    for inputs, targets in loader:
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(inputs), targets)
        loss.backward()
        optimizer.step()
dist.destroy_process_group()
