"""Lipschitz-network trainer that writes a new checkpoint file per step count.

The trainer keeps a `_load_state` method that would pick the newest `model.ckpt-*.pth`,
but nothing in the project calls it: every run starts from step 0, and each save goes to
a file of its own. Whether some start resumes from the newest file rests on a method
only code out of sight could call, so the finding is shown under `--preview` only.
"""
import glob
import os
from os.path import join

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Trainer:
    def __init__(self, train_dir, epochs=30, save_every=5):
        self.train_dir = train_dir
        self.epochs = epochs
        self.save_every = save_every
        self.local_rank = int(os.environ["LOCAL_RANK"])
        self.is_master = False

    def _load_state(self):
        found = glob.glob(join(self.train_dir, "checkpoints", "model.ckpt-*.pth"))
        found.sort(key=lambda name: int(name.rsplit("-", 1)[1].split(".")[0]))
        state = torch.load(found[-1], map_location="cpu")
        self.model.module.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        return state["epoch"]

    def _save_ckpt(self, step, epoch):
        if not self.is_master or epoch % self.save_every:
            return
        path = join(self.train_dir, "checkpoints", f"model.ckpt-{step}.pth")
        state = {
            "epoch": epoch,
            "model": self.model.module.state_dict(),
            "optimizer": self.optimizer.state_dict(),
        }
        torch.save(state, path)  # expect-preview: DDP014

    def __call__(self):
        torch.cuda.set_device(self.local_rank)
        dist.init_process_group("nccl")
        self.is_master = dist.get_rank() == 0
        os.makedirs(join(self.train_dir, "checkpoints"), exist_ok=True)
        net = nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 512), nn.ReLU(), nn.Linear(512, 10))
        self.model = DDP(net.cuda(), device_ids=[self.local_rank])
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.05, momentum=0.9)
        data = TensorDataset(torch.rand(2048, 3, 32, 32), torch.randint(0, 10, (2048,)))
        sampler = DistributedSampler(data, shuffle=True, drop_last=True)
        loader = DataLoader(data, batch_size=64, sampler=sampler)
        step = 0
        for epoch in range(self.epochs):
            sampler.set_epoch(epoch)
            for x, y in loader:
                loss = nn.functional.cross_entropy(self.model(x.cuda()), y.cuda())
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                step += 1
            self._save_ckpt(step, epoch)
        dist.destroy_process_group()


if __name__ == "__main__":
    Trainer("runs/lipschitz")()
