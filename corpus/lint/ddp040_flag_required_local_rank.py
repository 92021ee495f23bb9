"""Written for torch.distributed.launch: --local_rank is required, so under torchrun the
script stops at argument parsing. Nothing here says which torch it installs, and the
launcher of torch 1.x passes --local_rank: the finding is unproven (preview)."""

import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, required=True)  # expect-preview: DDP040
    args = parser.parse_args()
    torch.cuda.set_device(args.local_rank)
    dist.init_process_group("nccl")
    model = DDP(nn.Linear(10, 2).cuda(), device_ids=[args.local_rank])
    x = torch.randn(8, 10).cuda()
    model(x).sum().backward()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
