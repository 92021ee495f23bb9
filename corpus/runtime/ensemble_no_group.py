"""An ensemble: one independent model per process, no process group. Nothing to compare: exit 0."""

import os

import torch

rank = int(os.environ["RANK"])
torch.manual_seed(rank)  # each member differs on purpose
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for _ in range(30):
    loss = model(torch.randn(4, 8)).square().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print(f"member {rank} trained")
