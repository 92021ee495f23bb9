"""The micro-step helper clips every time, including inside no_sync."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def backward_step(model, x, y, accum, max_norm=1.0):
    loss = nn.functional.cross_entropy(model(x), y) / accum
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), max_norm)  # expect: DDP007
    return loss.detach()


def main(epochs=3, accum=2):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(nn.Linear(20, 5).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = TensorDataset(torch.randn(960, 20), torch.randint(0, 5, (960,)))
    sampler = DistributedSampler(data, drop_last=True)
    loader = DataLoader(data, batch_size=24, sampler=sampler)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for i, (x, y) in enumerate(loader):
            x, y = x.cuda(local_rank), y.cuda(local_rank)
            if (i + 1) % accum != 0:
                with model.no_sync():
                    backward_step(model, x, y, accum)
                continue
            backward_step(model, x, y, accum)
            optimizer.step()
            optimizer.zero_grad()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
