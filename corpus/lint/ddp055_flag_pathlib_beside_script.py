"""A small gloo experiment: the rendezvous file sits beside the script, built with
pathlib."""
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

STORE = Path(__file__).resolve().parent / "rendezvous"


def worker(rank, world_size):
    dist.init_process_group(
        "gloo",
        init_method="file://" + str(STORE),  # expect: DDP055
        rank=rank,
        world_size=world_size,
    )
    value = torch.tensor([float(rank)])
    dist.all_reduce(value)
    if rank == 0:
        print("sum of ranks:", value.item())
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(worker, args=(4,), nprocs=4)
