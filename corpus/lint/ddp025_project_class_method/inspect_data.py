"""One process: it imports the toolkit and builds a `Runner`, but never calls a method
that touches the distributed process group (only `optimizer`), so its download is its
own."""

import torch.nn as nn
from torchvision import datasets, transforms

from launchkit import Runner

runner = Runner()
sample = datasets.FashionMNIST("data", download=True, transform=transforms.ToTensor())
optimizer = runner.optimizer(nn.Linear(784, 10))
print(len(sample), optimizer)
