"""Fine-tuning script of the apex era: apex's DistributedDataParallel (one process per GPU)
when started by a launcher, DataParallel over the visible GPUs when started alone.
"""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, DistributedSampler, RandomSampler, TensorDataset


def build_model(args, device):
    model = nn.Sequential(nn.Linear(128, 256), nn.GELU(), nn.Linear(256, 2)).to(device)
    if args.local_rank != -1:
        try:
            from apex.parallel import DistributedDataParallel as ApexDDP
        except ImportError as err:
            raise ImportError("distributed fine-tuning needs apex") from err
        model = ApexDDP(model)
    elif args.n_gpu > 1:
        model = torch.nn.DataParallel(model)
    return model


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", -1)))
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args()
    if args.local_rank == -1:
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        args.n_gpu = torch.cuda.device_count()
    else:
        torch.cuda.set_device(args.local_rank)
        device = torch.device("cuda", args.local_rank)
        dist.init_process_group("nccl")
        args.n_gpu = 1

    data = TensorDataset(torch.randn(2048, 128), torch.randint(0, 2, (2048,)))
    if args.local_rank == -1:
        sampler = RandomSampler(data)
    else:
        sampler = DistributedSampler(data, drop_last=True)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    model = build_model(args, device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    for epoch in range(args.epochs):
        if args.local_rank != -1:
            sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
