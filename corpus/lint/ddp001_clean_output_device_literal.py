"""A re-identification trainer launched with torchrun: each process moves the model to
its own GPU and wraps it with `device_ids=[local_rank]`. The leftover `output_device=0`
changes nothing: DDP wraps a module that lives on the one device of `device_ids`, runs
its forward there and never reads `output_device`."""

import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def build_model(num_ids):
    backbone = nn.Sequential(nn.Conv2d(3, 64, 7, stride=2), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
    return nn.Sequential(backbone, nn.Flatten(), nn.Linear(64, num_ids))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=60)
    parser.add_argument("--batch-size", type=int, default=32)
    opt = parser.parse_args()
    opt.local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(opt.local_rank)
    dist.init_process_group("nccl")
    data = torch.load("market_train.pt")
    dataset = TensorDataset(data["images"], data["ids"])
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, batch_size=opt.batch_size, sampler=sampler, drop_last=True)
    model = build_model(int(data["ids"].max()) + 1).to(opt.local_rank)
    model = nn.parallel.DistributedDataParallel(model, device_ids=[opt.local_rank], output_device=0)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for epoch in range(opt.epochs):
        sampler.set_epoch(epoch)
        for images, ids in loader:
            images, ids = images.cuda(opt.local_rank), ids.cuda(opt.local_rank)
            loss = nn.functional.cross_entropy(model(images), ids)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), "reid_final.pth")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
