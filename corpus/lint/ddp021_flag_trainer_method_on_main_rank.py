"""A trainer class: the DDP model lives on `self.model`, and the validation method runs
only on the first process of each node (`self.local_rank == 0`) while the others go on
to the next epoch's first forward."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class SegTrainer:
    def __init__(self, train_loader, val_loader, epochs=50):
        self.local_rank = int(os.environ.get("LOCAL_RANK", 0))
        dist.init_process_group("nccl")
        torch.cuda.set_device(self.local_rank)
        net = nn.Sequential(
            nn.Conv2d(3, 32, 3, padding=1),
            nn.BatchNorm2d(32),
            nn.ReLU(inplace=True),
            nn.Conv2d(32, 19, 1),
        ).cuda()
        self.model = DDP(net, device_ids=[self.local_rank])  # expect: DDP017
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.01, momentum=0.9)
        self.train_loader = train_loader
        self.val_loader = val_loader
        self.epochs = epochs

    def fit(self):
        for epoch in range(self.epochs):
            self.train_loader.sampler.set_epoch(epoch)
            self.model.train()
            for images, masks in self.train_loader:
                logits = self.model(images.cuda(non_blocking=True))
                loss = nn.functional.cross_entropy(logits, masks.cuda(non_blocking=True))
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            if self.local_rank == 0:
                miou = self.validate()
                print(f"epoch {epoch}: mIoU {miou:.3f}")

    @torch.no_grad()
    def validate(self):
        self.model.eval()
        hits, total = 0, 0
        for images, masks in self.val_loader:
            preds = self.model(images.cuda()).argmax(dim=1)  # expect: DDP021
            hits += (preds == masks.cuda()).sum().item()
            total += masks.numel()
        return hits / max(total, 1)
