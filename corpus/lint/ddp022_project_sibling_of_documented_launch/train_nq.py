"""The Natural Questions trainer beside it, which the README says to run "the same way":
it keeps the older `--local_rank` option. No command of the project starts a script of
this folder with torchrun, so the finding that torchrun leaves the option at its default
is unproven here."""
import argparse

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=0)  # expect-preview: DDP022
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    torch.cuda.set_device(args.local_rank)
    dist.init_process_group("nccl")
    model = DDP(torch.nn.Linear(768, 768).cuda(), device_ids=[args.local_rank])
    return model, args


if __name__ == "__main__":
    main()
