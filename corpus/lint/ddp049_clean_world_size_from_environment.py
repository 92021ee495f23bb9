"""`--world_size` defaults to -1 (the launcher's WORLD_SIZE) and is read from the
environment when the launcher sets it: the option never overrides torchrun."""
import argparse
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    parser = argparse.ArgumentParser(description="frame interpolation")
    parser.add_argument("--world_size", default=-1, type=int, help="number of processes")
    parser.add_argument("--epochs", default=300, type=int)
    parser.add_argument("--batch_size", default=16, type=int)
    args = parser.parse_args()
    if "WORLD_SIZE" in os.environ:
        args.world_size = int(os.environ["WORLD_SIZE"])

    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl", world_size=args.world_size)

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
