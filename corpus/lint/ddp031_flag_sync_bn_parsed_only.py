"""Segmentation training with a --sync-bn switch in its launch scripts; the switch is
parsed and shown in the config dump, and nothing converts the model."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def get_parser():
    parser = argparse.ArgumentParser(description="seg training")
    parser.add_argument("--epochs", type=int, default=50)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--sync-bn", action="store_true", help="synchronise BN across GPUs")  # expect: DDP031
    return parser


class SegHead(nn.Module):
    def __init__(self, classes=21):
        super().__init__()
        self.conv = nn.Conv2d(3, 32, 3, padding=1)
        self.norm = nn.BatchNorm2d(32)
        self.out = nn.Conv2d(32, classes, 1)

    def forward(self, x):
        return self.out(torch.relu(self.norm(self.conv(x))))


def main():
    args = get_parser().parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    if dist.get_rank() == 0:
        print("config:", args)
    data = TensorDataset(torch.randn(800, 3, 32, 32), torch.randint(0, 21, (800, 32, 32)))
    sampler = DistributedSampler(data, drop_last=True)
    loader = DataLoader(data, batch_size=8, sampler=sampler)
    model = DDP(SegHead().cuda(local_rank), device_ids=[local_rank])  # expect: DDP017
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.cuda(local_rank), y.cuda(local_rank)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
