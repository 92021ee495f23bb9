"""A segmentation trainer collects the predicted masks of its sharded validation loader,
converts them to NumPy arrays for a hand-written IoU, and keeps the best checkpoint by
that number: rank 0 decides on its own 1/N of the validation images."""
import os

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler


def foreground_iou(predicted: np.ndarray, truth: np.ndarray) -> float:
    inter = np.logical_and(predicted == 1, truth == 1).sum()
    union = np.logical_or(predicted == 1, truth == 1).sum()
    return float(inter) / max(float(union), 1.0)


def train(segmenter, train_set, val_set, epochs):
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(segmenter.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=6e-5)
    train_sampler = DistributedSampler(train_set, shuffle=True)
    train_loader = DataLoader(train_set, batch_size=4, sampler=train_sampler, drop_last=True)
    val_loader = DataLoader(val_set, batch_size=4, sampler=DistributedSampler(val_set, shuffle=False))
    best_iou = 0.0
    for epoch in range(epochs):
        train_sampler.set_epoch(epoch)
        model.train()
        for images, masks in train_loader:
            loss = torch.nn.functional.cross_entropy(model(images.cuda()), masks.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        model.eval()
        predicted, truth = [], []
        with torch.no_grad():
            for images, masks in val_loader:
                predicted.append(model(images.cuda()).argmax(dim=1).cpu())
                truth.append(masks)
        predicted = torch.cat(predicted)
        truth = torch.cat(truth)
        iou = foreground_iou(predicted.numpy(), truth.numpy())
        if rank == 0 and iou > best_iou:  # expect: DDP038
            best_iou = iou
            torch.save(model.module.state_dict(), "best_segmenter.pth")  # expect-preview: DDP014
