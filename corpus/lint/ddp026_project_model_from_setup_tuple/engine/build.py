"""Builds everything a run needs: the model, wrapped for the job, and its optimizer."""

import torch
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel


class DepthNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Conv2d(3, 16, 3, padding=1)
        self.head = nn.Conv2d(16, 1, 1)

    def forward(self, image):
        return self.head(torch.relu(self.encoder(image)))

    def training_loss(self, image, depth):
        return nn.functional.l1_loss(self.forward(image), depth)


def build_run(cfg, local_rank):
    model = DepthNet().cuda(local_rank)
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg["lr"])
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=cfg["step"])
    model = DistributedDataParallel(model, device_ids=[local_rank])
    return model, optimizer, scheduler
