"""A helper called only by rank 0 (mp.spawn, one GPU per rank): its `.cuda(0)` is rank 0's
own GPU. A helper that every rank calls still has a hard-coded device."""

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.nn.parallel import DistributedDataParallel


def score(model, batches):
    model.eval()
    total = 0.0
    with torch.no_grad():
        for inputs, targets in batches:
            inputs, targets = inputs.cuda(0), targets.cuda(0)
            total += nn.functional.mse_loss(model(inputs), targets).item()
    model.train()
    return total / max(len(batches), 1)


def warm_up(model):
    probe = torch.zeros(2, 8).cuda(0)  # expect: DDP001
    model(probe)


def worker(rank, world_size):
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    torch.cuda.set_device(rank)
    model = DistributedDataParallel(nn.Linear(8, 1).cuda(rank), device_ids=[rank])
    warm_up(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    held_out = [(torch.randn(4, 8), torch.randn(4, 1)) for _ in range(3)]
    for _ in range(5):
        inputs = torch.randn(16, 8).cuda(rank)
        loss = model(inputs).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if rank == 0:
            print("held-out loss", score(model.module, held_out))
    dist.destroy_process_group()


if __name__ == "__main__":
    count = torch.cuda.device_count()
    mp.spawn(worker, args=(count,), nprocs=count)
