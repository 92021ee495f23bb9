"""The script keeps a `--local_rank` option for old launch commands, but replaces the parsed
value with the ranks a helper library reads from the environment before anything reads it; the
whole namespace is logged afterwards. torchrun works: nothing depends on the option."""
import argparse
import json
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

from trainkit.distributed import ranks_from_environment


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--local_rank", type=int, default=0)
    parser.add_argument("--out", default="runs/latest")
    args = parser.parse_args()

    args.local_rank, args.rank, args.world_size = ranks_from_environment()
    torch.cuda.set_device(args.local_rank)
    dist.init_process_group("nccl")
    if args.rank == 0:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "args.json"), "w") as f:
            json.dump(vars(args), f)

    model = DDP(nn.Linear(16, 4).cuda(), device_ids=[args.local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for _ in range(10):
        loss = model(torch.randn(8, 16, device="cuda")).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
