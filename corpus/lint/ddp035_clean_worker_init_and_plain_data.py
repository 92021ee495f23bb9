"""Same seed on every rank, but the loaders seed their workers from the rank
(`worker_init_fn`), and the validation transforms draw nothing at random."""
import os

import numpy as np
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler
from torchvision import datasets, transforms


def seed_worker(worker_id):
    seed = torch.initial_seed() % 2**32 + 1000 * dist.get_rank()
    np.random.seed(seed % 2**32)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    torch.manual_seed(0)
    augment = transforms.Compose([transforms.RandomHorizontalFlip(), transforms.ToTensor()])
    train_set = datasets.CIFAR100("data", train=True, transform=augment)
    sampler = DistributedSampler(train_set, drop_last=True)
    loader = DataLoader(train_set, batch_size=128, sampler=sampler, num_workers=4,
                        worker_init_fn=seed_worker, drop_last=True)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for images, _ in loader:
            images.cuda(non_blocking=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
