"""A trainer class rewrites `best.pt` whenever validation improves, and its `test()` method
reads it back, under `torch.no_grad()`, to score the best weights once training is over.
That read is an evaluation, not a resume: a torn `best.pt` costs one set of best weights,
so the in-place save is only shown under --preview."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Trainer:
    def __init__(self, loaders, out_dir, epochs=40):
        self.local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(self.local_rank)
        self.model = DDP(nn.Linear(32, 5).cuda(), device_ids=[self.local_rank])
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-3)
        self.loaders, self.out_dir, self.epochs = loaders, out_dir, epochs
        self.best = float("inf")

    def _run_epoch(self, loader, training):
        total = 0.0
        for x, y in loader:
            loss = nn.functional.cross_entropy(self.model(x.cuda()), y.cuda())
            if training:
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            total += loss.item()
        return total / max(1, len(loader))

    def _save(self, state, is_best):
        if is_best:
            torch.save(state, os.path.join(self.out_dir, "best.pt"))  # expect-preview: DDP014

    def train(self):
        for epoch in range(self.epochs):
            self.loaders["train"].sampler.set_epoch(epoch)
            self._run_epoch(self.loaders["train"], training=True)
            with torch.no_grad():
                val = self._run_epoch(self.loaders["val"], training=False)
            if dist.get_rank() == 0:
                state = {"epoch": epoch, "model": self.model.module.state_dict()}
                self._save(state, val < self.best)
            self.best = min(self.best, val)

    def test(self):
        best = torch.load(os.path.join(self.out_dir, "best.pt"), map_location="cpu")
        self.model.module.load_state_dict(best["model"])
        with torch.no_grad():
            return self._run_epoch(self.loaders["test"], training=False)
