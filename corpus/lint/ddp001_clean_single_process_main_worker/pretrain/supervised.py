"""Supervised pretraining on one GPU: the worker function is called `main_worker`, as in
multi-GPU examples, but nothing here or in `run.py` starts a process group, so its `cuda:0`
is the only device the run uses."""

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def main_worker(device):
    policy = nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 32)).to(device)
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-4)
    states = torch.randn(2048, 128)
    actions = torch.randint(0, 32, (2048,))
    loader = DataLoader(TensorDataset(states, actions), batch_size=64, shuffle=True)
    for epoch in range(10):
        for x, y in loader:
            loss = nn.functional.cross_entropy(policy(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        torch.save(policy.state_dict(), f"policy_{epoch}.pt")


def run():
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    main_worker(device)
