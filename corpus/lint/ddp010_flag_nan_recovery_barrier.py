"""Speech enhancement trainer with NaN recovery: after five non-finite losses in a row a
rank reloads the last good checkpoint, and the reload starts with a barrier. Only the ranks
whose own loss went bad call it."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Enhancer:
    def __init__(self, net, loader, ckpt_dir):
        dist.init_process_group("nccl")
        self.local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(self.local_rank)
        self.model = DDP(net.cuda(), device_ids=[self.local_rank])
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=2e-4)
        self.loader = loader
        self.ckpt_dir = ckpt_dir
        self.bad_steps = 0

    def reload_last_good(self):
        dist.barrier()
        state = torch.load(os.path.join(self.ckpt_dir, "good.pt"), map_location="cpu")
        self.model.module.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])

    def train_epoch(self, epoch):
        self.loader.sampler.set_epoch(epoch)
        for noisy, clean in self.loader:
            estimate = self.model(noisy.cuda(non_blocking=True))
            loss = nn.functional.l1_loss(estimate, clean.cuda(non_blocking=True))
            if torch.isfinite(loss):
                self.bad_steps = 0
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            else:
                self.bad_steps += 1
                if self.bad_steps >= 5:
                    self.reload_last_good()  # expect: DDP010
                    self.bad_steps = 0


def run(net, loader, ckpt_dir, epochs):
    trainer = Enhancer(net, loader, ckpt_dir)
    for epoch in range(epochs):
        trainer.train_epoch(epoch)
