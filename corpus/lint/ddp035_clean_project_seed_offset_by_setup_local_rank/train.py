"""A referring-segmentation trainer seeds every library with the configured seed plus the
GPU index the set-up helper of another module returns: the ranks of a node draw different
crops, flips and jitter (the value comes from out of sight; its name says it is the local
rank, and the helper does compute it from the rank)."""
import argparse
import random

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler
from torchvision import transforms

from common.dist_setup import init_distributed


def build_loader(dataset_cls, root, batch_size):
    augment = transforms.Compose(
        [transforms.RandomResizedCrop(480, scale=(0.6, 1.0)), transforms.ColorJitter(0.2, 0.2, 0.2), transforms.ToTensor()]
    )
    dataset = dataset_cls(root, transform=augment)
    sampler = DistributedSampler(dataset, shuffle=True)
    return sampler, DataLoader(dataset, batch_size=batch_size, sampler=sampler, num_workers=6, drop_last=True)


def train(args, model_cls, dataset_cls):
    local_rank = init_distributed()
    seed = args.seed + local_rank
    torch.manual_seed(seed)
    np.random.seed(seed)
    random.seed(seed)
    model = DDP(model_cls().cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    sampler, loader = build_loader(dataset_cls, args.root, args.batch_size)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for images, masks in loader:
            loss = torch.nn.functional.binary_cross_entropy_with_logits(model(images.cuda()), masks.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            print(f"epoch {epoch} loss {loss.item():.4f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--root", default="data/refcoco")
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--epochs", type=int, default=40)
    args = parser.parse_args()
    train(args, None, None)
