"""Two decorators of this file around saves: `once_per_host` calls the function on local
rank 0 only (the save runs once per machine, onto its own disk); `with_retries` calls it on
every rank, so the final save is written by every process."""
import functools
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def once_per_host(fn):
    @functools.wraps(fn)
    def inner(*args, **kwargs):
        if int(os.environ.get("LOCAL_RANK", 0)) == 0:
            fn(*args, **kwargs)

    return inner


def with_retries(fn):
    @functools.wraps(fn)
    def inner(*args, **kwargs):
        for _ in range(3):
            try:
                return fn(*args, **kwargs)
            except OSError:
                continue
        return None

    return inner


@once_per_host
def save_local_copy(model, epoch):
    torch.save(model.module.state_dict(), f"/tmp/local_copy_{epoch}.pt")


@with_retries
def save_final(model):
    torch.save(model.module.state_dict(), "final.pt")


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(nn.Linear(8, 2).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = TensorDataset(torch.randn(512, 8), torch.randint(0, 2, (512,)))
    sampler = DistributedSampler(data, drop_last=True)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        save_local_copy(model, epoch)
    save_final(model)  # expect: DDP013
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
