"""A step-based trainer: one long loop over steps, the loader's iterator made anew each
time it runs out."""
import torch
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel


class Trainer:
    def __init__(self, train_loader, local_rank, total_steps):
        self.train_loader = train_loader
        self.total_steps = total_steps
        net = nn.Sequential(nn.Conv2d(4, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 1, 1))
        self.net = DistributedDataParallel(net.cuda(), device_ids=[local_rank])
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=1e-4)

    def train(self):
        batches = iter(self.train_loader)
        for step in range(self.total_steps):
            try:
                image, alpha = next(batches)
            except StopIteration:
                batches = iter(self.train_loader)
                image, alpha = next(batches)
            loss = nn.functional.l1_loss(self.net(image.cuda()).sigmoid(), alpha.cuda())
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
