"""Loader factory that receives the parsed arguments; both train and eval samplers use the
local rank stored on args."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def build_loaders(train_set, val_set, args):
    train_sampler = DistributedSampler(train_set, rank=args.local_rank, drop_last=True)  # expect: DDP019
    val_sampler = DistributedSampler(  # expect-preview: DDP003
        val_set, dist.get_world_size(), args.local_rank, False  # expect: DDP019
    )
    train_loader = DataLoader(train_set, batch_size=args.batch_size, sampler=train_sampler)
    val_loader = DataLoader(val_set, batch_size=256, sampler=val_sampler)
    return train_sampler, train_loader, val_loader


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()
    args.local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(args.local_rank)
    dist.init_process_group("nccl")
    model = DDP(nn.Linear(8, 3).cuda(args.local_rank), device_ids=[args.local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    train_set = TensorDataset(torch.randn(2048, 8), torch.randint(0, 3, (2048,)))
    val_set = TensorDataset(torch.randn(512, 8), torch.randint(0, 3, (512,)))
    sampler, loader, val_loader = build_loaders(train_set, val_set, args)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        correct = torch.zeros(1, device=f"cuda:{args.local_rank}")
        with torch.no_grad():
            for x, y in val_loader:
                correct += (model(x.cuda()).argmax(1) == y.cuda()).sum()
        dist.all_reduce(correct)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
