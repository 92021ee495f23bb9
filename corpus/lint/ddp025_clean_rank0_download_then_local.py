"""Rank 0 downloads, everyone waits, then all ranks load with download=False / local paths."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler
from torchvision import datasets, transforms
from transformers import AutoConfig, AutoModelForImageClassification


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="./data")
    parser.add_argument("--model-dir", default="./pretrained/vit")
    args = parser.parse_args()

    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    device = torch.device("cuda", local_rank)

    if rank == 0:
        datasets.SVHN(args.data, split="train", download=True)
    dist.barrier()
    train = datasets.SVHN(args.data, split="train", download=False, transform=transforms.ToTensor())

    config = AutoConfig.from_pretrained(args.model_dir)
    net = AutoModelForImageClassification.from_pretrained(args.model_dir, config=config)
    head = AutoModelForImageClassification.from_pretrained(os.path.join(args.model_dir, "head"))
    backup = AutoModelForImageClassification.from_pretrained("./checkpoints/vit-svhn")
    del head, backup

    model = DDP(net.to(device), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-5)
    sampler = DistributedSampler(train, shuffle=True, drop_last=True)
    loader = DataLoader(train, batch_size=32, sampler=sampler)
    for epoch in range(2):
        sampler.set_epoch(epoch)
        for x, y in loader:
            out = model(pixel_values=x.to(device), labels=y.to(device))
            optimizer.zero_grad()
            out.loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
