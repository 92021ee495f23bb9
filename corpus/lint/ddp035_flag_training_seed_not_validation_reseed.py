"""Few-shot segmentation trainer under torchrun: each epoch re-seeds torch with the same
value on every rank before training (the finding), and `validate()` re-seeds once more for
its own pass over the whole, unsharded validation episodes, so that every rank scores the
same episodes alike: that second seeding is left alone."""
import argparse
import os
import random

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler


class EpisodeSet(Dataset):
    def __init__(self, split, flip):
        self.items = torch.load(f"episodes_{split}.pt")
        self.flip = flip

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        query, mask = self.items[i]
        if self.flip and random.random() < 0.5:
            query, mask = query.flip(-1), mask.flip(-1)
        return query, mask


def fix_seed(value):
    random.seed(value)
    np.random.seed(value)
    torch.manual_seed(value)


def validate(loader, model, args):
    if args.fixed_val_seed:
        fix_seed(args.seed)
    model.eval()
    hits = torch.zeros(2, device="cuda")
    with torch.no_grad():
        for query, mask in loader:
            pred = model(query.cuda()).argmax(1)
            hits[0] += (pred == mask.cuda()).sum()
            hits[1] += mask.numel()
    return (hits[0] / hits[1]).item()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=321)
    parser.add_argument("--epochs", type=int, default=200)
    parser.add_argument("--fixed-val-seed", dest="fixed_val_seed", action="store_true")
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")

    train_set = EpisodeSet("train", flip=True)
    val_set = EpisodeSet("val", flip=False)
    sampler = DistributedSampler(train_set, shuffle=True)
    train_loader = DataLoader(train_set, batch_size=8, sampler=sampler, num_workers=4)
    val_loader = DataLoader(val_set, batch_size=1, shuffle=False, num_workers=4)

    net = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 2, 1))
    model = DDP(net.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.005, momentum=0.9)
    best = 0.0
    for epoch in range(args.epochs):
        fix_seed(args.seed + epoch)  # expect: DDP035
        sampler.set_epoch(epoch)
        model.train()
        for query, mask in train_loader:
            loss = nn.functional.cross_entropy(model(query.cuda()), mask.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        score = validate(val_loader, model, args)
        if score > best and dist.get_rank() == 0:
            best = score
            print(f"epoch {epoch}: best mIoU {best:.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
