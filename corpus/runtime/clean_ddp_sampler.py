"""A correct DDP loop with a DistributedSampler; prints a parameter checksum for comparison."""

import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group("gloo")
torch.manual_seed(0)
data = TensorDataset(torch.randn(64, 8), torch.randn(64, 1))
sampler = DistributedSampler(data, shuffle=True, seed=1)
loader = DataLoader(data, batch_size=4, sampler=sampler)
net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.BatchNorm1d(16), torch.nn.Linear(16, 1))
model = DDP(net)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for epoch in range(2):
    sampler.set_epoch(epoch)
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
if dist.get_rank() == 0 and len(sys.argv) > 1:
    torch.save({k: v.clone() for k, v in model.module.state_dict().items()}, sys.argv[1])
dist.destroy_process_group()
