"""MS MARCO trainer, started by the README with the deprecated launcher, which passes
the local rank as an option (both spellings declared: `--local-rank` from torch 2.0 on)."""
import argparse

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", "--local-rank", type=int, default=0)  # expect-preview: DDP022
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    local_rank = args.local_rank
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(torch.nn.Linear(768, 768).cuda(), device_ids=[local_rank])
    return model, args


if __name__ == "__main__":
    main()
