"""Video diffusion training started with mp.spawn: the workers meet through a file in the
working directory, the same path in every run."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def worker(rank, args):
    temp_dir = "./"
    init_file = os.path.abspath(os.path.join(temp_dir, ".torch_distributed_init"))
    if os.name == "nt":
        init_method = "file:///" + init_file.replace("\\", "/")
        dist.init_process_group("gloo", init_method=init_method, rank=rank, world_size=args.gpus)  # expect: DDP055
    else:
        init_method = f"file://{init_file}"
        dist.init_process_group("nccl", init_method=init_method, rank=rank, world_size=args.gpus)  # expect: DDP055
    torch.cuda.set_device(rank)
    torch.manual_seed(args.seed + rank)
    model = DDP(nn.Linear(64, 64).cuda(rank), device_ids=[rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    data = TensorDataset(torch.randn(4096, 64))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for (x,) in loader:
            x = x.cuda(rank, non_blocking=True)
            noise = torch.randn_like(x)
            loss = (model(x + noise) - x).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpus", type=int, default=torch.cuda.device_count())
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    mp.spawn(worker, args=(args,), nprocs=args.gpus)
