"""Segmentation-style CNN defined in the script, built through a factory function."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def conv_block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU())


class SmallSegNet(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.enc1 = conv_block(3, 32)
        self.enc2 = conv_block(32, 64)
        self.out = nn.Conv2d(64, classes, 1)

    def forward(self, x):
        return self.out(self.enc2(self.enc1(x)))


def build_model(cfg):
    return SmallSegNet(cfg["classes"])


def main():
    cfg = {"classes": 21, "batch_size": 2, "epochs": 50, "lr": 0.01}
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = build_model(cfg).to(local_rank)
    ddp_model = DistributedDataParallel(model, device_ids=[local_rank])  # expect: DDP017
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=cfg["lr"], momentum=0.9)

    data = TensorDataset(torch.randn(64, 3, 128, 128), torch.randint(0, 21, (64, 128, 128)))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=cfg["batch_size"], sampler=sampler)
    for epoch in range(cfg["epochs"]):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.to(local_rank), y.to(local_rank)
            loss = nn.functional.cross_entropy(ddp_model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
