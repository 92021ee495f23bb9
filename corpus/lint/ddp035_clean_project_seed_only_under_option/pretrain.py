"""Contrastive pretraining with two random crops per image. The seed helper seeds only
when `--seed` is given, and the project's launch script never passes it: every rank then
starts from its own entropy, so the shared seed is a run nobody documents."""
import os
import random

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler
from torchvision import datasets, transforms

from options import parse_options


def set_seed(opts):
    if opts.seed is not None:
        random.seed(opts.seed)
        torch.manual_seed(opts.seed)


def two_views(size=96):
    crop = transforms.Compose(
        [transforms.RandomResizedCrop(size), transforms.RandomHorizontalFlip(), transforms.ToTensor()]
    )
    return lambda image: (crop(image), crop(image))


def main():
    opts = parse_options()
    set_seed(opts)  # expect-preview: DDP035
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    images = datasets.ImageFolder(opts.data, transform=two_views())
    sampler = DistributedSampler(images, shuffle=True, drop_last=True)
    loader = DataLoader(images, batch_size=opts.batch_size, sampler=sampler, num_workers=8)
    encoder = DDP(torch.nn.Linear(3 * 96 * 96, 128).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(encoder.parameters(), lr=0.05, momentum=0.9)
    for epoch in range(opts.epochs):
        sampler.set_epoch(epoch)
        for (first, second), _ in loader:
            a = F.normalize(encoder(first.cuda().flatten(1)), dim=1)
            b = F.normalize(encoder(second.cuda().flatten(1)), dim=1)
            loss = F.cross_entropy(a @ b.t() / 0.1, torch.arange(len(a), device=a.device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
