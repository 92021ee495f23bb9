"""Spawned workers build a parallel context that takes the seed as an argument and seeds
each process itself; the parent's own seed call is for its own setup. The workers are
seeded, out of sight, so nothing is reported."""
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from parallel_toolkit import ParallelContext


def worker(rank, world_size, seed):
    context = ParallelContext(rank=rank, world_size=world_size, backend="nccl", seed=seed)
    model = torch.nn.Linear(16, 16).to(context.device)
    noise = torch.randn(4, 16, device=context.device)
    out = model(noise).sum()
    dist.all_reduce(out)
    print(out.item())
    context.destroy()


def main(world_size=4, seed=1234):
    torch.manual_seed(seed)
    mp.spawn(worker, args=(world_size, seed), nprocs=world_size)


if __name__ == "__main__":
    main()
