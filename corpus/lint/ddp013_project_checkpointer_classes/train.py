"""Saves through checkpointer objects of another module: the full checkpoint is written by
rank 0 only; the adapter checkpointer is called on every rank, so its save is reported
where it writes (in `checkpointers.py`), unproven: its file name is built from what the
callers pass, which this module does not show there."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from checkpointers import AdapterCheckpointer, FullCheckpointer


def main():
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(nn.Linear(32, 4).cuda(), device_ids=[local_rank])
    adapter = nn.Linear(4, 4)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    data = TensorDataset(torch.randn(2048, 32), torch.randint(0, 4, (2048,)))
    sampler = DistributedSampler(data, drop_last=True)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    full = FullCheckpointer("out")
    adapters = AdapterCheckpointer("out")
    for epoch in range(5):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        state = {"model": model.module.state_dict(), "adapter": adapter.state_dict()}
        if rank == 0:
            full.save_checkpoint(state, epoch)
        adapters.save_checkpoint(state, epoch)
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
