"""A trainer in the style of the PyTorch DDP tutorial series: the rank is kept as
`self.gpu_id` (passed by mp.spawn) and saves run under `if self.gpu_id == 0:`; a logging
helper is decorated to run on rank 0 only."""
import functools
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def rank_zero_only(fn):
    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        if dist.get_rank() == 0:
            return fn(*args, **kwargs)
        return None

    return wrapped


@rank_zero_only
def export_weights(model, path):
    tmp = f"{path}.tmp"
    torch.save(model.state_dict(), tmp)
    os.replace(tmp, path)


class Trainer:
    def __init__(self, model, loader, optimizer, gpu_id):
        self.gpu_id = gpu_id
        self.model = DDP(model.to(gpu_id), device_ids=[gpu_id])
        self.loader = loader
        self.optimizer = optimizer

    def save(self, epoch):
        tmp = "checkpoint.pt.tmp"
        torch.save({"model": self.model.module.state_dict(), "epoch": epoch}, tmp)
        os.replace(tmp, "checkpoint.pt")

    def train(self, epochs):
        for epoch in range(epochs):
            self.loader.sampler.set_epoch(epoch)
            for x, y in self.loader:
                x, y = x.to(self.gpu_id), y.to(self.gpu_id)
                loss = nn.functional.cross_entropy(self.model(x), y)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            if self.gpu_id == 0:
                self.save(epoch)
        export_weights(self.model.module, "final.pt")


def worker(rank, world_size, epochs):
    os.environ.setdefault("MASTER_ADDR", "localhost")
    os.environ.setdefault("MASTER_PORT", "29500")
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    data = TensorDataset(torch.randn(1024, 8), torch.randint(0, 4, (1024,)))
    loader = DataLoader(data, batch_size=32, sampler=DistributedSampler(data, drop_last=True))
    model = nn.Linear(8, 4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    Trainer(model, loader, optimizer, rank).train(epochs)
    dist.destroy_process_group()


if __name__ == "__main__":
    n = torch.cuda.device_count()
    mp.spawn(worker, args=(n, 5), nprocs=n)
