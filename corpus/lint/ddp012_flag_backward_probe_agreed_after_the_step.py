"""A batch-size search whose probe runs a full training step: a rank that runs out of memory
inside the backward leaves DDP's gradient all-reduce half done while the other ranks wait
in it, so the MIN all-reduce of the outcome that follows comes too late to keep the ranks
together."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def survives_step(model, optimizer, batch_size, device):
    try:
        images = torch.randn(batch_size, 3, 224, 224, device=device)
        model(images).logsumexp(-1).mean().backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return True
    except torch.cuda.OutOfMemoryError:  # expect: DDP012
        torch.cuda.empty_cache()
        return False


def tune_batch_size(model, optimizer, device, start=8):
    size = start
    while True:
        ok = torch.tensor([1.0 if survives_step(model, optimizer, size * 2, device) else 0.0], device=device)
        dist.all_reduce(ok, op=dist.ReduceOp.MIN)
        if ok.item() < 1.0:
            return size
        size *= 2


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    model = DDP(nn.Sequential(nn.Conv2d(3, 64, 7, stride=4), nn.Flatten(), nn.LazyLinear(1000)).to(device))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    print(dist.get_rank(), tune_batch_size(model, optimizer, device))


if __name__ == "__main__":
    main()
