"""Rank 0 shows more sample predictions than the other ranks in a loop that issues no
collective (the model is the bare module, under no_grad), and a dataset size both sides of
a rank test compute the same way."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn


def build_items(download):
    return list(range(100))


def main():
    dist.init_process_group(backend="nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    net = nn.Linear(5, 2).cuda()
    shown = 2
    if rank == 0:
        shown = 16
    with torch.no_grad():
        for i in range(shown):
            print(net(torch.randn(1, 5, device="cuda")).argmax().item())
    if rank == 0:
        items = build_items(download=True)
    dist.barrier()
    if rank != 0:
        items = build_items(download=False)
    for i in range(len(items)):
        total = torch.tensor([float(items[i])], device="cuda")
        dist.all_reduce(total)


if __name__ == "__main__":
    main()
