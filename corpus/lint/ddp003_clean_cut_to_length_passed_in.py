"""Saliency-guided crop pre-training: every few epochs each rank scores its shard of the
training images in order, the scores are gathered, put back in dataset order and cut to
the dataset length the caller passes in, so the sampler's padded repeats are dropped."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler


def score_images(loader, encoder, num_images):
    encoder.eval()
    scores = []
    with torch.no_grad():
        for images, _ in loader:
            heat = encoder(images.cuda(non_blocking=True)).mean(dim=(1, 2, 3))
            scores.append(heat)
    local = torch.cat(scores)
    gathered = [torch.zeros_like(local) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, local)
    ordered = torch.stack(gathered, dim=1).reshape(-1)
    return ordered[:num_images]


def main(train_set, score_set, epochs=200):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    num_images = len(score_set)
    sampler = DistributedSampler(train_set, drop_last=True)
    loader = DataLoader(train_set, batch_size=128, sampler=sampler, num_workers=8)
    score_sampler = DistributedSampler(score_set, shuffle=False)
    score_loader = DataLoader(score_set, batch_size=256, sampler=score_sampler, num_workers=8)
    encoder = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 128, 3))
    model = DDP(encoder.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    saliency = torch.ones(num_images, device="cuda")
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        if epoch % 20 == 0:
            saliency = score_images(score_loader, model.module, num_images)
        model.train()
        for images, index in loader:
            weight = saliency[index.cuda()]
            loss = (model(images.cuda()).pow(2).mean(dim=(1, 2, 3)) * weight).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()
