"""Recommendation model trained over gloo, placing everything by the local rank but
leaving `set_device(0)` from a one-GPU version of the script."""
import argparse

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=0)  # expect: DDP022
    parser.add_argument("--epochs", type=int, default=20)
    return parser.parse_args()


def main():
    args = parse_args()
    local_rank = args.local_rank
    torch.cuda.set_device(0)  # expect-preview: DDP001
    dist.init_process_group(backend="gloo")  # expect: DDP032
    clicks = TensorDataset(torch.randint(0, 5000, (100000, 20)), torch.rand(100000))
    sampler = DistributedSampler(clicks)
    loader = DataLoader(clicks, batch_size=256, sampler=sampler, drop_last=True)
    model = nn.Sequential(nn.EmbeddingBag(5000, 64), nn.Linear(64, 1)).to(local_rank)
    model = DDP(model, device_ids=[local_rank], output_device=local_rank)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for items, target in loader:
            items, target = items.to(local_rank), target.to(local_rank)
            loss = nn.functional.binary_cross_entropy_with_logits(model(items).squeeze(1), target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
