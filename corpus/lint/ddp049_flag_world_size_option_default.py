"""Launched with `python -m torch.distributed.launch --nproc_per_node=4 --use_env train.py`:
the process count also comes from `--world_size` (default 4), which overrides the
launcher's WORLD_SIZE. On 2 or 8 GPUs without `--world_size`, the job never starts."""
import argparse
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    parser = argparse.ArgumentParser(description="frame interpolation")
    parser.add_argument("--world_size", default=4, type=int, help="number of GPUs")
    parser.add_argument("--epochs", default=300, type=int)
    parser.add_argument("--batch_size", default=16, type=int)
    args = parser.parse_args()

    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl", world_size=args.world_size)  # expect: DDP049

    data = TensorDataset(torch.randn(4096, 12), torch.randn(4096, 3))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=args.batch_size, sampler=sampler, num_workers=4)
    model = DDP(nn.Linear(12, 3).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.cuda(local_rank, non_blocking=True), y.cuda(local_rank, non_blocking=True)
            loss = nn.functional.l1_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
