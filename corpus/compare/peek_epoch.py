"""Correct: a trainer that looks at one batch each epoch to print its size
(`len(next(iter(loader))[0])`) before `set_epoch`, then trains on the epoch and evaluates. The
peeked batch is no training step and its iterator no epoch; the evaluation pass trains nothing.
`--undivided` keeps the per-process batch of one process (24 on every rank): the culprit is then
the global batch, 48 at 2 processes."""

import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Trainer:
    def __init__(self, model, train_loader, eval_loader):
        self.model = DDP(model)
        self.train_loader = train_loader
        self.eval_loader = eval_loader
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.05)

    def epoch(self, number):
        size = len(next(iter(self.train_loader))[0])
        if dist.get_rank() == 0:
            print(f"epoch {number}: batches of {size}, {len(self.train_loader)} steps")
        self.train_loader.sampler.set_epoch(number)
        for inputs, targets in self.train_loader:
            loss = torch.nn.functional.mse_loss(self.model(inputs), targets)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
        with torch.no_grad():
            errors = [torch.nn.functional.mse_loss(self.model(x), y) for x, y in self.eval_loader]
        return float(sum(errors)) / max(len(errors), 1)


dist.init_process_group("gloo")
world = dist.get_world_size()
per_process = 24 if "--undivided" in sys.argv else 24 // world
torch.manual_seed(0)
train = TensorDataset(torch.randn(96, 6), torch.randn(96, 2))
held_out = TensorDataset(torch.randn(24, 6), torch.randn(24, 2))
shards = DistributedSampler(train, seed=3)
train_loader = DataLoader(train, batch_size=per_process, sampler=shards)  # line:batch
eval_shards = DistributedSampler(held_out, shuffle=False)
eval_loader = DataLoader(held_out, batch_size=8, sampler=eval_shards)
model = torch.nn.Sequential(torch.nn.Linear(6, 12), torch.nn.ReLU(), torch.nn.Linear(12, 2))
trainer = Trainer(model, train_loader, eval_loader)
for number in range(8):
    trainer.epoch(number)
dist.destroy_process_group()
