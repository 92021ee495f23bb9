"""Hugging Face datasets split by node; evaluation in a no_grad function."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from datasets import load_from_disk
from datasets.distributed import split_dataset_by_node
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader


def collate(rows):
    x = torch.stack([torch.tensor(r["features"]) for r in rows])
    y = torch.tensor([r["label"] for r in rows])
    return x, y


@torch.no_grad()
def evaluate(model, dataset, device):
    loader = DataLoader(dataset, batch_size=256, collate_fn=collate)
    hits = 0
    for x, y in loader:
        hits += (model.module(x.to(device)).argmax(1) == y.to(device)).sum().item()
    return hits / len(dataset)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="data/processed")
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    dist.init_process_group("nccl")
    full = load_from_disk(args.data)
    train_part = split_dataset_by_node(
        full["train"], rank=dist.get_rank(), world_size=dist.get_world_size()
    )
    loader = DataLoader(train_part, batch_size=64, shuffle=True, collate_fn=collate)
    model = DDP(nn.Linear(128, 3).to(device), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.02)
    for epoch in range(3):
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            print(epoch, evaluate(model, full["test"], device))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
