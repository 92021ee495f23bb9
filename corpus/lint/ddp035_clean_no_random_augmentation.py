"""Feature regression: one seed on every rank, but the data pipeline draws nothing at
random (fixed resize and normalisation), so there is nothing to repeat."""
import os

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler
from torchvision import datasets, transforms


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    torch.manual_seed(17)
    fixed = transforms.Compose([transforms.Resize(64), transforms.ToTensor(),
                                transforms.Normalize((0.5,), (0.5,))])
    train_set = datasets.FashionMNIST("data", train=True, transform=fixed)
    sampler = DistributedSampler(train_set, drop_last=True)
    loader = DataLoader(train_set, batch_size=256, sampler=sampler, num_workers=2,
                        drop_last=True)
    for epoch in range(2):
        sampler.set_epoch(epoch)
        for images, _ in loader:
            images.cuda(non_blocking=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
