"""An endless generator that counts its passes and sets the sampler's epoch each time;
an evaluation stream read with `itertools.cycle` over an in-order sampler."""
import itertools
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def forever(loader, sampler):
    epoch = 0
    while True:
        sampler.set_epoch(epoch)
        for batch in loader:
            yield batch
        epoch += 1


def main(steps=30_000):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    train_set = TensorDataset(torch.randn(4000, 8), torch.randint(0, 2, (4000,)))
    probe_set = TensorDataset(torch.randn(256, 8), torch.randint(0, 2, (256,)))
    sampler = DistributedSampler(train_set, drop_last=True)
    loader = DataLoader(train_set, batch_size=32, sampler=sampler)
    probe = DataLoader(
        probe_set, batch_size=32, sampler=DistributedSampler(probe_set, shuffle=False)
    )
    probes = itertools.cycle(probe)
    model = DDP(nn.Linear(8, 2).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    stream = forever(loader, sampler)
    for step in range(steps):
        x, y = next(stream)
        loss = nn.functional.cross_entropy(model(x.cuda(local_rank)), y.cuda(local_rank))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 1000 == 0:
            with torch.no_grad():
                px, py = next(probes)
                model.module(px.cuda(local_rank))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
