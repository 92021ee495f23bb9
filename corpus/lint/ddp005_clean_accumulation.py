"""Gradient accumulation divides by the number of micro-steps, not by the GPUs."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--global-batch", type=int, default=512)
    parser.add_argument("--micro-batch", type=int, default=16)
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    world_size = dist.get_world_size()
    accum_steps = args.global_batch // (args.micro_batch * world_size)
    data = TensorDataset(torch.randn(8192, 64), torch.randn(8192, 64))
    sampler = DistributedSampler(data, drop_last=True)
    loader = DataLoader(data, batch_size=args.micro_batch, sampler=sampler)
    model = DDP(nn.Linear(64, 64).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for i, (x, y) in enumerate(loader):
            loss = nn.functional.mse_loss(model(x.cuda(local_rank)), y.cuda(local_rank))
            loss = loss / accum_steps
            if (i + 1) % accum_steps != 0:
                with model.no_sync():
                    loss.backward()
                continue
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
