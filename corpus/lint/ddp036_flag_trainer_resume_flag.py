"""A trainer that resumes from `--resume` when given: the model and the iteration come
back, the SGD momentum does not (the saved state has none)."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Trainer:
    def __init__(self, model, loader, sampler, cfg):
        self.local_rank = int(os.environ["LOCAL_RANK"])
        self.model = DDP(model.cuda(self.local_rank), device_ids=[self.local_rank])
        self.loader, self.sampler, self.cfg = loader, sampler, cfg
        self.optimizer = torch.optim.SGD(
            self.model.parameters(), lr=cfg.lr, momentum=0.9, weight_decay=1e-4
        )
        self.iteration = 0
        if cfg.resume:
            self.load(cfg.resume)

    def load(self, path):
        state = torch.load(path, map_location="cpu")  # expect: DDP036
        self.model.module.load_state_dict(state["net"])
        self.iteration = state["iteration"]

    def save(self, path):
        torch.save({"net": self.model.module.state_dict(), "iteration": self.iteration}, path)

    def fit(self):
        epoch = 0
        while self.iteration < self.cfg.max_iter:
            self.sampler.set_epoch(epoch)
            for x, y in self.loader:
                out = self.model(x.cuda(self.local_rank))
                loss = nn.functional.cross_entropy(out, y.cuda(self.local_rank))
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                self.iteration += 1
                if self.iteration % 5000 == 0 and dist.get_rank() == 0:
                    self.save(f"{self.cfg.out}/iter_{self.iteration:07d}.pth")
            epoch += 1
