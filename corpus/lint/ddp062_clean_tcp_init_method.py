"""A trainer counted over several machines whose process group meets at the `tcp://`
address given on the command line: the MASTER_ADDR it also sets (for a profiling tool that
reads it) is not where the group meets."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def train(gpu, args):
    rank = args.machine_rank * args.gpus + gpu
    dist.init_process_group("nccl", init_method=args.dist_url, rank=rank, world_size=args.world_size)
    torch.cuda.set_device(gpu)
    model = DDP(nn.Linear(256, 16).cuda(gpu), device_ids=[gpu])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(300):
        optimizer.zero_grad()
        model(torch.randn(16, 256, device=gpu)).relu().mean().backward()
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--num-machines", type=int, default=1)
    parser.add_argument("--machine-rank", type=int, default=0)
    parser.add_argument("--gpus", type=int, default=8)
    parser.add_argument("--dist-url", default="tcp://10.1.0.1:23456")
    args = parser.parse_args()
    args.world_size = args.gpus * args.num_machines
    os.environ["MASTER_ADDR"] = "localhost"
    mp.spawn(train, nprocs=args.gpus, args=(args,))
