"""A trainer that keeps its job rank in `self.distributed_rank`, unpacked with the local rank
from a helper of another module: `checkpoint_save` returns early on every rank but the first,
the metrics file is written under `== 0`. Only the debugging snapshot, which nothing guards,
is written by every rank."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from dist_env import node_and_job_ranks


class Trainer:
    def __init__(self, out_dir, epochs):
        dist.init_process_group("nccl")
        self.local_rank, self.distributed_rank = node_and_job_ranks()
        torch.cuda.set_device(self.local_rank)
        self.model = DDP(nn.Linear(64, 8).cuda(), device_ids=[self.local_rank])
        self.optim = torch.optim.AdamW(self.model.parameters(), lr=3e-4)
        data = TensorDataset(torch.randn(4096, 64), torch.randint(0, 8, (4096,)))
        self.sampler = DistributedSampler(data, shuffle=True, drop_last=True)
        self.loader = DataLoader(data, batch_size=64, sampler=self.sampler)
        self.out_dir = out_dir
        self.epochs = epochs
        self.epoch = 0

    def checkpoint_save(self):
        if self.distributed_rank != 0:
            return
        state = {
            "model": self.model.module.state_dict(),
            "optim": self.optim.state_dict(),
            "epoch": self.epoch,
        }
        path = os.path.join(self.out_dir, "checkpoint.pt")
        torch.save(state, path + ".tmp")
        os.replace(path + ".tmp", path)

    def debug_snapshot(self):
        weights = self.model.module.state_dict()
        torch.save(weights, os.path.join(self.out_dir, "debug.pt"))

    def train_epoch(self):
        self.sampler.set_epoch(self.epoch)
        total = torch.zeros((), device="cuda")
        for x, y in self.loader:
            loss = nn.functional.cross_entropy(self.model(x.cuda()), y.cuda())
            self.optim.zero_grad(set_to_none=True)
            loss.backward()
            self.optim.step()
            total += loss.detach()
        return total.item()

    def run(self):
        while self.epoch < self.epochs:
            loss = self.train_epoch()
            if self.distributed_rank == 0:
                with open(os.path.join(self.out_dir, "stats.txt"), "a") as f:
                    f.write(f"{self.epoch} {loss}\n")
            self.epoch += 1
            self.checkpoint_save()
        self.debug_snapshot()  # expect: DDP013


if __name__ == "__main__":
    Trainer("runs/exp", epochs=10).run()
