"""ImageNet-style trainer: the architecture is picked by name on the command line."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torchvision.models as models
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("-a", "--arch", default="resnet18", choices=sorted(n for n in models.__dict__ if n.islower()))
    parser.add_argument("--epochs", type=int, default=90)
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = models.__dict__[args.arch]()
    model.cuda(local_rank)
    model = DDP(model, device_ids=[local_rank])  # expect: DDP017
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    data = TensorDataset(torch.randn(512, 3, 64, 64), torch.randint(0, 1000, (512,)))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=32, sampler=sampler, num_workers=8, pin_memory=True)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for images, target in loader:
            images, target = images.cuda(local_rank, non_blocking=True), target.cuda(local_rank, non_blocking=True)
            loss = nn.functional.cross_entropy(model(images), target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
