"""Image classifier: one seed, alike on every rank, is set before the branch, so the
training branch's sharded loader draws its workers' augmentations from the same stream on
every rank (the inference branch alone would not matter)."""

import argparse
import os
import random

import numpy as np
import torch
import torch.distributed as dist
import torchvision
import torchvision.transforms as T
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler
from torchvision.datasets import ImageFolder


def evaluate(model, loader):
    model.eval()
    correct = 0
    with torch.no_grad():
        for image, label in loader:
            correct += (model(image.cuda()).argmax(1) == label.cuda()).sum().item()
    return correct / len(loader.dataset)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--inference", action="store_true")
    parser.add_argument("--epochs", type=int, default=20)
    args = parser.parse_args()
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(torchvision.models.vit_b_16().cuda(), device_ids=[local_rank])
    random.seed(0)
    torch.manual_seed(0)  # expect: DDP035
    np.random.seed(0)
    if args.inference:
        test_set = ImageFolder("data/test", transform=T.ToTensor())
        test_loader = DataLoader(test_set, batch_size=64, num_workers=4)
        print(evaluate(model, test_loader))
    else:
        augment = T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(), T.ToTensor()])
        train_set = ImageFolder("data/train", transform=augment)
        sampler = DistributedSampler(train_set)
        loader = DataLoader(train_set, batch_size=64, sampler=sampler, num_workers=4)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for epoch in range(args.epochs):
            sampler.set_epoch(epoch)
            for image, label in loader:
                loss = torch.nn.functional.cross_entropy(model(image.cuda()), label.cuda())
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()


if __name__ == "__main__":
    main()
