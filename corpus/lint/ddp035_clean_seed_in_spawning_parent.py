"""The seed is set in the launcher that `mp.spawn`s the workers: each spawned worker
imports the script afresh and starts with a torch generator of its own, so the ranks'
loader workers do not share a random stream."""
import argparse

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.utils.data import DataLoader, DistributedSampler
from torchvision import datasets, transforms


def main_worker(gpu, ngpus, args):
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:23456",
                            rank=gpu, world_size=ngpus)
    torch.cuda.set_device(gpu)
    augment = transforms.Compose([transforms.RandomResizedCrop(224), transforms.ToTensor()])
    train_set = datasets.ImageFolder(args.data, transform=augment)
    sampler = DistributedSampler(train_set, drop_last=True)
    loader = DataLoader(train_set, batch_size=32, sampler=sampler, num_workers=4,
                        drop_last=True)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for images, _ in loader:
            images.cuda(gpu, non_blocking=True)
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("data")
    parser.add_argument("--epochs", type=int, default=90)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.manual_seed(args.seed)  # expect: DDP041
    ngpus = torch.cuda.device_count()
    mp.spawn(main_worker, nprocs=ngpus, args=(ngpus, args))


if __name__ == "__main__":
    main()
