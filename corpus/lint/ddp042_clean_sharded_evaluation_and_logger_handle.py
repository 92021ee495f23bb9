"""Evaluation that every rank joins when the model is sharded and only the main rank runs
otherwise (an early exit whose test is not a rank test alone), and an experiment logger
handle that exists on the main rank only and is tested before each use."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn


def make_logger(rank):
    return open("metrics.log", "a") if rank == 0 else None


def evaluate(model, batches, sharded, rank):
    if not sharded and rank != 0:
        return None
    device = torch.device("cuda", torch.cuda.current_device())
    total = torch.zeros(1, device=device)
    for x in batches:
        total += model(x.to(device)).sum()
    if sharded:
        dist.all_reduce(total)
    return total.item()


def main():
    dist.init_process_group(backend="nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    model = nn.Linear(6, 1).cuda()
    if rank == 0:
        run = make_logger(rank)
        run_id = "eval-0"
    else:
        run = None
    score = evaluate(model, [torch.randn(3, 6) for _ in range(4)], sharded=False, rank=rank)
    if run is not None:
        run.write(f"{run_id} {score}\n")


if __name__ == "__main__":
    main()
