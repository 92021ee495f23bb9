"""A SLURM speaker trainer (srun starts one process per GPU): `--local_rank` is declared
for old launch scripts but never read; the rank and the GPU come from the `idr_torch`
module, whose `local_rank` is an attribute of the module, not of the parsed options."""
import argparse

import idr_torch
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def parse_args():
    parser = argparse.ArgumentParser(description="speaker embedding trainer")
    parser.add_argument("--local_rank", type=int, default=None)
    parser.add_argument("--max_epochs", type=int, default=40)
    parser.add_argument("--batch_size", type=int, default=64)
    return parser.parse_args()


def main():
    args = parse_args()
    dist.init_process_group("nccl", rank=idr_torch.rank, world_size=idr_torch.size)
    torch.cuda.set_device(idr_torch.local_rank)
    model = DDP(nn.Linear(80, 192).cuda(), device_ids=[idr_torch.local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(args.max_epochs):
        loss = model(torch.randn(args.batch_size, 80).cuda()).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
