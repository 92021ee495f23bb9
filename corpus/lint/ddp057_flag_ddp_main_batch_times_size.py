"""BERT fine-tuning ported from a one-GPU `main.py` that trained with 64 per step: the DDP
version multiplies the loader's batch by the world size, so each process loads 64 x N
and one step sees 64 x N x N samples."""
import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def main(train_set, model):
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=2e-5)
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    dist.init_process_group("nccl")
    rank, size = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    sampler = DistributedSampler(train_set, num_replicas=size, rank=rank, shuffle=True)
    loader = DataLoader(train_set, batch_size=args.batch_size * size, sampler=sampler)  # expect: DDP057
    model = DDP(model.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for batch in loader:
            loss = model(**{k: v.cuda() for k, v in batch.items()}).loss
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
