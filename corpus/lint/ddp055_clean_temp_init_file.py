"""GAN training started with mp.spawn: the rendezvous file lives in a temporary directory
made for the run, or is deleted before the workers start when the user names it."""
import argparse
import os
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def worker(rank, args, temp_dir):
    if args.init_file:
        init_method = f"file://{os.path.abspath(args.init_file)}"
    else:
        init_file = os.path.abspath(os.path.join(temp_dir, ".torch_distributed_init"))
        init_method = f"file://{init_file}"
    dist.init_process_group("nccl", init_method=init_method, rank=rank, world_size=args.gpus)
    torch.cuda.set_device(rank)
    model = DDP(nn.Linear(128, 128).cuda(rank), device_ids=[rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-4)
    for _ in range(args.steps):
        z = torch.randn(16, 128, device=f"cuda:{rank}")
        loss = model(z).square().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()


def worker_shared(rank, world_size):
    dist.init_process_group("gloo", init_method="file:///tmp/shared_init", rank=rank, world_size=world_size)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpus", type=int, default=2)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--init-file", default="")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp_dir:
        mp.spawn(worker, args=(args, temp_dir), nprocs=args.gpus)
    if os.path.exists("/tmp/shared_init"):
        os.remove("/tmp/shared_init")
    mp.spawn(worker_shared, args=(2,), nprocs=2)
