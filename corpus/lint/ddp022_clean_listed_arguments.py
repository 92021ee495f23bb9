"""A Megatron-style argument module: `--local_rank` is declared for the old launcher, and
only a loop that prints every argument reads the namespace; the setup takes the GPU from
the global rank modulo the GPU count, never from the argument."""

import argparse

import torch
import torch.distributed as dist


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rank", type=int, default=0)
    parser.add_argument("--world-size", type=int, default=1)
    parser.add_argument("--local_rank", type=int, default=None, help="set by the launcher")
    args = parser.parse_args()
    for name in sorted(vars(args)):
        print(f"  {name} = {getattr(args, name)}")
    shown = {key: value for key, value in vars(args).items() if value is not None}
    print(len(shown), "arguments set")
    return args


def setup(args):
    torch.cuda.set_device(args.rank % torch.cuda.device_count())
    dist.init_process_group("nccl", rank=args.rank, world_size=args.world_size)
