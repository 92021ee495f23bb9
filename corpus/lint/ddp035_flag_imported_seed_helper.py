"""Kaggle-style trainer: `seed_everything(cfg.seed)` comes from the project's utilities
(out of sight here, so only a preview finding) and the training set flips and crops at
random with albumentations in 8 workers per rank."""
import os

import albumentations as A
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

from common.utils import seed_everything


class Config:
    seed = 42
    epochs = 12
    batch_size = 16


def train(cfg, dataset_cls):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    seed_everything(cfg.seed)  # expect-preview: DDP035
    train_tfms = A.Compose([A.RandomResizedCrop(384, 384), A.HorizontalFlip(p=0.5)])
    train_set = dataset_cls(train_tfms)
    sampler = DistributedSampler(train_set, shuffle=True, drop_last=True)
    loader = DataLoader(train_set, batch_size=cfg.batch_size, sampler=sampler,
                        num_workers=8, drop_last=True)
    model = DDP(nn.Conv2d(3, 1, 3).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for epoch in range(cfg.epochs):
        sampler.set_epoch(epoch)
        for image, target in loader:
            loss = nn.functional.mse_loss(model(image.cuda()), target.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    train(Config(), None)
