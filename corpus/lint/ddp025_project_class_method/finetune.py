"""Launched with torchrun: the script never names torch.distributed, but `runner.wrap`
(a method of a project class, on an object made here) wraps the model in DDP, so every
rank runs this file and each downloads CIFAR-10 in place at the same time."""

import torch.nn as nn
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

from launchkit import Runner

runner = Runner(lr=0.05)
train_set = datasets.CIFAR10("data", download=True, transform=transforms.ToTensor())  # expect: DDP025
model = runner.wrap(nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 10)))
optimizer = runner.optimizer(model)
for images, labels in DataLoader(train_set, batch_size=64):
    loss = nn.functional.cross_entropy(model(images.cuda()), labels.cuda())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
