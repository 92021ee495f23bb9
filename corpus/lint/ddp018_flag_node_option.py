"""A launcher for several machines: one process per GPU, the global rank computed from the
node's number; the worker then takes the group's rank as its GPU index."""
import argparse

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def worker(gpu, args):
    rank = args.node_rank * args.gpus_per_node + gpu
    dist.init_process_group(
        "nccl", init_method=args.dist_url, rank=rank, world_size=args.nodes * args.gpus_per_node
    )
    torch.cuda.set_device(dist.get_rank())  # expect: DDP018
    model = DDP(nn.Linear(1024, 1000).cuda(), device_ids=[torch.cuda.current_device()])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(100):
        loss = model(torch.randn(64, 1024, device="cuda")).logsumexp(dim=1).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=1)
    parser.add_argument("--node-rank", dest="node_rank", type=int, default=0)
    parser.add_argument("--gpus-per-node", dest="gpus_per_node", type=int, default=8)
    parser.add_argument("--dist-url", dest="dist_url", default="tcp://10.0.0.1:23456")
    args = parser.parse_args()
    mp.spawn(worker, args=(args,), nprocs=args.gpus_per_node)
