"""A trainer that runs both as one process and under torchrun: on an out-of-memory error
it skips the batch only when no process group exists; under DDP it re-raises, so torchrun
stops every rank."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def train(epochs=3):
    distributed = "LOCAL_RANK" in os.environ
    data = TensorDataset(torch.randn(1024, 128), torch.randint(0, 10, (1024,)))
    model = nn.Sequential(nn.Linear(128, 512), nn.ReLU(), nn.Linear(512, 10))
    if distributed:
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        dist.init_process_group("nccl")
        model = DistributedDataParallel(model.cuda(), device_ids=[local_rank])
        sampler = DistributedSampler(data, drop_last=True)
    else:
        model, sampler = model.cuda(), None
    loader = DataLoader(data, batch_size=64, sampler=sampler, shuffle=sampler is None)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        for x, y in loader:
            try:
                loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
                optimizer.zero_grad()
                loss.backward()
            except RuntimeError as err:
                if "out of memory" in str(err):
                    print("out of memory, skipping this batch")
                    if dist.is_initialized():
                        raise
                    torch.cuda.empty_cache()
                    optimizer.zero_grad()
                    continue
                raise
            optimizer.step()


if __name__ == "__main__":
    train()
