"""The same argument module, but the setup picks the GPU from `--local_rank`: under
torchrun it stays None on every rank."""

import argparse

import torch
import torch.distributed as dist


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=0)  # expect: DDP022
    args = parser.parse_args()
    for name in vars(args):
        print(f"  {name} = {getattr(args, name)}")
    return args


def setup(args):
    torch.cuda.set_device(args.local_rank)
    dist.init_process_group("nccl")
