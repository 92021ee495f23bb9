"""Constructing `Cluster` joins the process group (its `__init__` calls
`init_process_group`): every rank runs this evaluation and downloads the test split."""

import torch
from torchvision import datasets, transforms

from launchkit.runner import Cluster

cluster = Cluster("gloo")
test_set = datasets.MNIST("data", train=False, download=True, transform=transforms.ToTensor())  # expect: DDP025
print(f"rank {cluster.rank} of {cluster.world_size}: {len(test_set)} images", torch.__version__)
