"""Conditional context; the clip runs only on the synchronising micro-step."""
import contextlib
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main(epochs=2, accum=8):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(nn.Linear(16, 16).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    data = TensorDataset(torch.randn(512, 16))
    sampler = DistributedSampler(data, drop_last=True)
    loader = DataLoader(data, batch_size=4, sampler=sampler)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for step, (x,) in enumerate(loader):
            sync = (step + 1) % accum == 0
            with contextlib.nullcontext() if sync else model.no_sync():
                x = x.cuda(local_rank)
                loss = nn.functional.mse_loss(model(x), x) / accum
                loss.backward()
                if sync:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                    optimizer.step()
                    optimizer.zero_grad()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
