"""A distributed search for the largest batch that fits: each probe runs a forward alone
(no backward, so no gradient all-reduce a failing rank could leave half done), catches the
CUDA OOM and reports failure, and every rank, the one that ran out of memory included,
all-reduces the outcome with MIN before choosing the next size: the ranks never part ways."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def fits(model, batch_size, device):
    try:
        tokens = torch.randint(0, 32000, (batch_size, 1024), device=device)
        with torch.autocast("cuda"):
            model(tokens)
        return True
    except torch.cuda.OutOfMemoryError:
        torch.cuda.empty_cache()
        return False


def largest_batch(model, device, limit=512):
    low, high, best = 1, limit, 1
    while low <= high:
        middle = (low + high) // 2
        outcome = torch.tensor(int(fits(model, middle, device)), device=device)
        dist.all_reduce(outcome, op=dist.ReduceOp.MIN)
        if outcome.item() == 1:
            best, low = middle, middle + 1
        else:
            high = middle - 1
    return best


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    model = DDP(nn.Sequential(nn.Embedding(32000, 512), nn.Linear(512, 32000)).to(device))
    print(dist.get_rank(), largest_batch(model, device))


if __name__ == "__main__":
    main()
