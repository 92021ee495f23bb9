"""A multi-machine trainer that takes the first machine's address from an option, and
fills in localhost only for a run on one machine."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def train(gpu, args):
    rank = args.node_rank * args.gpus + gpu
    dist.init_process_group("nccl", rank=rank, world_size=args.world_size)
    torch.cuda.set_device(gpu)
    model = DDP(nn.Linear(128, 2).cuda(gpu), device_ids=[gpu])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for _ in range(200):
        optimizer.zero_grad()
        model(torch.randn(8, 128, device=gpu)).logsumexp(1).mean().backward()
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=1)
    parser.add_argument("--node-rank", type=int, default=0)
    parser.add_argument("--gpus", type=int, default=8)
    parser.add_argument("--master-addr", default=None)
    args = parser.parse_args()
    args.world_size = args.gpus * args.nodes
    if args.nodes == 1:
        os.environ["MASTER_ADDR"] = "localhost"
    else:
        os.environ["MASTER_ADDR"] = args.master_addr
    os.environ["MASTER_PORT"] = "29400"
    mp.spawn(train, nprocs=args.gpus, args=(args,))
