"""A trainer whose `validate` runs on the first process inside `fit`, and again on every
rank from the script after training: the method is not a one-rank method, so its forward
through the wrapper is not reported (every rank runs the final validation together)."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class DepthTrainer:
    def __init__(self, train_loader, val_loader, epochs=20):
        self.rank = int(os.environ.get("RANK", 0))
        local_rank = int(os.environ.get("LOCAL_RANK", 0))
        torch.cuda.set_device(local_rank)
        net = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1),
            nn.BatchNorm2d(16),
            nn.ReLU(),
            nn.Conv2d(16, 1, 1),
        ).cuda()
        self.model = DDP(net, device_ids=[local_rank])  # expect: DDP017
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=3e-4)
        self.train_loader = train_loader
        self.val_loader = val_loader
        self.epochs = epochs

    def fit(self):
        for epoch in range(self.epochs):
            self.train_loader.sampler.set_epoch(epoch)
            for images, depth in self.train_loader:
                pred = self.model(images.cuda())
                loss = nn.functional.l1_loss(pred, depth.cuda())
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            if self.rank == 0 and epoch % 5 == 0:
                print(f"epoch {epoch}: l1 {self.validate():.4f}")

    @torch.no_grad()
    def validate(self):
        self.model.eval()
        total, count = 0.0, 0
        for images, depth in self.val_loader:
            pred = self.model(images.cuda())
            total += nn.functional.l1_loss(pred, depth.cuda(), reduction="sum").item()
            count += depth.numel()
        self.model.train()
        return total / max(count, 1)


def main(train_loader, val_loader):
    dist.init_process_group("nccl")
    trainer = DepthTrainer(train_loader, val_loader)
    trainer.fit()
    final = trainer.validate()
    if dist.get_rank() == 0:
        print(f"final l1 {final:.4f}")
    dist.destroy_process_group()
