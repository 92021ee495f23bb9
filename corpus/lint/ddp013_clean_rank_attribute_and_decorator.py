"""Trainer class whose saves are guarded through attributes and a rank-only decorator."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def rank_zero_only(fn):
    def wrapped(*args, **kwargs):
        if dist.get_rank() == 0:
            return fn(*args, **kwargs)
        return None

    return wrapped


class Trainer:
    def __init__(self, model, loader, rank, local_rank, out_dir):
        self.local_rank = local_rank
        self.gpu_id = rank
        self.is_master = rank == 0
        self.model = DDP(model.cuda(local_rank), device_ids=[local_rank])
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.05, momentum=0.9)
        self.loader = loader
        self.out_dir = out_dir

    def _atomic_save(self, state, name):
        path = os.path.join(self.out_dir, name)
        torch.save(state, path + ".tmp")
        os.replace(path + ".tmp", path)

    def save_snapshot(self, epoch):
        if self.gpu_id == 0:
            self._atomic_save({"model": self.model.module.state_dict(), "epoch": epoch}, "snap.pt")

    def save_last(self, epoch):
        if self.is_master:
            self._atomic_save({"model": self.model.module.state_dict(), "epoch": epoch}, "last.pt")

    @rank_zero_only
    def save_optimizer(self, epoch):
        self._atomic_save({"optimizer": self.optimizer.state_dict(), "epoch": epoch}, "opt.pt")

    def fit(self, epochs):
        for epoch in range(epochs):
            self.loader.sampler.set_epoch(epoch)
            for x, y in self.loader:
                x, y = x.cuda(self.local_rank), y.cuda(self.local_rank)
                loss = nn.functional.cross_entropy(self.model(x), y)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            self.save_snapshot(epoch)
            self.save_last(epoch)
            self.save_optimizer(epoch)
            dist.barrier()


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    data = TensorDataset(torch.randn(4096, 32), torch.randint(0, 4, (4096,)))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=64, sampler=sampler, num_workers=2)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4))
    Trainer(model, loader, dist.get_rank(), local_rank, "checkpoints").fit(10)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
