"""CIFAR spiking-network trainer under torchrun: `--manual-seed` is optional, and when it
is not given each process draws its own with `random.randint`, so the ranks seed apart.
Only a command that passes the option seeds every rank alike: unproven."""
import argparse
import os
import random

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler
from torchvision import datasets, transforms

parser = argparse.ArgumentParser()
parser.add_argument("--manual-seed", dest="manual_seed", type=int)
parser.add_argument("--epochs", type=int, default=200)
args = parser.parse_args()

local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
if args.manual_seed is None:
    args.manual_seed = random.randint(1, 10000)
random.seed(args.manual_seed)
torch.manual_seed(args.manual_seed)  # expect-preview: DDP035

augment = transforms.Compose([transforms.RandomCrop(32, padding=4), transforms.RandomHorizontalFlip(),
                              transforms.ToTensor()])
train_set = datasets.CIFAR10("data/cifar10", train=True, transform=augment)
sampler = DistributedSampler(train_set, shuffle=True)
loader = DataLoader(train_set, batch_size=128, sampler=sampler, num_workers=4)
model = DDP(nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 10)).cuda(), device_ids=[local_rank])
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
for epoch in range(args.epochs):
    sampler.set_epoch(epoch)
    for images, labels in loader:
        loss = nn.functional.cross_entropy(model(images.cuda()), labels.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
