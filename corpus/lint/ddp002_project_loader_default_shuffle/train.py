"""Trainer: the training loader comes from `get_loader` with its default (shuffling);
nothing in the project ever moves the sampler's epoch, so every epoch reads the same order."""
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

from data import get_loader


def dice_loss(logits, masks, eps=1.0):
    probs = logits.sigmoid()
    inter = (probs * masks).sum(dim=(1, 2, 3))
    union = probs.sum(dim=(1, 2, 3)) + masks.sum(dim=(1, 2, 3))
    return (1 - (2 * inter + eps) / (union + eps)).mean()


def main(model, train_set, epochs=100):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    loader = get_loader(train_set, batch_size=16)
    model = DDP(model.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    for epoch in range(epochs):
        model.train()
        for images, masks in loader:
            logits = model(images.cuda())
            loss = F.binary_cross_entropy_with_logits(logits, masks.cuda()) + dice_loss(
                logits, masks.cuda()
            )
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            torch.save(model.module.state_dict(), f"polyp_epoch{epoch}.pth")
    dist.destroy_process_group()
