"""Handwriting recognition with torchrun: the script follows torch's reproducibility
recipe (a `worker_init_fn` re-seeding NumPy and `random` from `torch.initial_seed()`, and a
loader `generator` seeded with `cfg.seed`). Each rank seeds that generator alike, so the
workers of every rank start from the same base seed and the elastic distortions repeat
across the ranks."""
import os
import random

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler


def seed_worker(worker_id):
    worker_seed = torch.initial_seed() % 2**32
    np.random.seed(worker_seed)
    random.seed(worker_seed)


class LineImages(Dataset):
    def __init__(self, lines, height=64):
        self.lines = lines
        self.height = height

    def __len__(self):
        return len(self.lines)

    def __getitem__(self, index):
        image, text = self.lines[index]
        if random.random() < 0.5:
            shift = np.random.randint(-4, 5)
            image = np.roll(image, shift, axis=1)
        return torch.from_numpy(image.astype(np.float32)), text


def build_loader(cfg, lines):
    data = LineImages(lines)
    sampler = DistributedSampler(data, shuffle=True)
    generator = torch.Generator()
    generator.manual_seed(cfg.seed)  # expect: DDP035
    loader = DataLoader(
        data,
        batch_size=cfg.batch_size,
        sampler=sampler,
        num_workers=cfg.workers,
        worker_init_fn=seed_worker,
        generator=generator,
    )
    return sampler, loader


def train(cfg, lines, model):
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group("nccl")
    torch.cuda.set_device(local_rank)
    sampler, loader = build_loader(cfg, lines)
    net = DDP(model.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(net.parameters(), lr=cfg.lr)
    ctc = nn.CTCLoss(zero_infinity=True)
    for epoch in range(cfg.epochs):
        sampler.set_epoch(epoch)
        for images, targets in loader:
            log_probs = net(images.cuda()).log_softmax(2)
            lengths = torch.full((log_probs.size(1),), log_probs.size(0), dtype=torch.long)
            loss = ctc(log_probs, targets["labels"], lengths, targets["lengths"])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()
