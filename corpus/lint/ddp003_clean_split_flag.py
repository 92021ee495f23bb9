"""One loader factory for every split: shuffle and drop_last follow the split."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def get_loader(dataset, split, batch_size):
    is_train = split == "train"
    sampler = DistributedSampler(dataset, shuffle=is_train, drop_last=is_train)
    loader = DataLoader(dataset, batch_size=batch_size, sampler=sampler, drop_last=is_train)
    return loader, sampler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    full = TensorDataset(torch.randn(900, 4), torch.randint(0, 2, (900,)))
    train_loader, train_sampler = get_loader(full, "train", 16)
    model = DDP(nn.Linear(4, 2).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(args.epochs):
        train_sampler.set_epoch(epoch)
        for x, y in train_loader:
            loss = nn.functional.cross_entropy(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
