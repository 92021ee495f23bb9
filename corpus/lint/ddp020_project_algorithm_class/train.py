"""The algorithm object comes from another module of the project: whether it is an
`nn.Module` (so that `.cuda()` moves it to GPU 0) is out of sight there, so the finding on
the `--gpu`-less branch is unproven."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel

from algorithms import Consistency


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpu", type=int, default=None)
    args = parser.parse_args()
    dist.init_process_group("nccl")
    algo = Consistency(nn.Linear(16, 4))
    if args.gpu is not None:
        torch.cuda.set_device(args.gpu)
        algo.net = DistributedDataParallel(algo.net.cuda(args.gpu), device_ids=[args.gpu])
    else:
        algo.cuda()  # expect-preview: DDP020
        algo.net = DistributedDataParallel(algo.net)
    algo.fit(torch.randn(64, 16))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
