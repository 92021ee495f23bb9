"""The seed helper adds the rank, and the training transforms crop at random: every
rank's workers draw their own augmentations."""
import os
import random

import numpy as np
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler
from torchvision import datasets, transforms


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    seed_everything(1000 + dist.get_rank())
    augment = transforms.Compose([transforms.RandomCrop(32, padding=4), transforms.ToTensor()])
    train_set = datasets.CIFAR10("data", train=True, transform=augment)
    sampler = DistributedSampler(train_set, drop_last=True)
    loader = DataLoader(train_set, batch_size=128, sampler=sampler, num_workers=4,
                        drop_last=True)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for images, _ in loader:
            images.cuda(non_blocking=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
