"""A DataLoader subclass builds a DistributedSampler for training loaders only; this
script evaluates a checkpoint epoch after epoch on the test split, whose loader has no
DistributedSampler: nothing to set an epoch on."""
import os

import torch
import torch.distributed as dist
from torch.utils import data
from torchvision import datasets, transforms


class SplitLoader(data.DataLoader):
    def __init__(self, root, batch_size, train=True):
        dataset = datasets.CIFAR10(root, train=train, transform=transforms.ToTensor())
        sampler = None
        if train and dist.is_initialized():
            sampler = data.DistributedSampler(dataset)
        super().__init__(dataset, batch_size=batch_size, shuffle=False, sampler=sampler)


def main(checkpoints, root):
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    loader = SplitLoader(root, 256, train=False)
    for path in checkpoints:
        model = torch.load(path, map_location="cuda").eval()
        with torch.no_grad():
            correct = sum((model(x.cuda()).argmax(1) == y.cuda()).sum().item() for x, y in loader)
        print(path, correct / len(loader.dataset))
