"""A trainer that writes its resume checkpoint and, every few epochs, a numbered copy:
both through file handles from a path manager (remote or local storage). The resume file
`checkpoint.pt` is opened with "wb" and rewritten in place every epoch: a crash mid-write
leaves it truncated."""

import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class PathManager:
    """Opens local paths; a remote backend would be registered here."""

    def open(self, path, mode="r"):
        return open(path, mode)

    def mkdirs(self, path):
        os.makedirs(path, exist_ok=True)


path_manager = PathManager()


class Trainer:
    def __init__(self, save_dir, keep_every, epochs):
        self.local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(self.local_rank)
        dist.init_process_group("nccl")
        self.model = DDP(nn.Linear(64, 10).cuda(), device_ids=[self.local_rank])
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=3e-4)
        self.save_dir = save_dir
        self.keep_every = keep_every
        self.epochs = epochs

    def save_checkpoint(self, epoch):
        if dist.get_rank() != 0:
            return
        path_manager.mkdirs(self.save_dir)
        targets = [os.path.join(self.save_dir, "checkpoint.pt")]
        if self.keep_every > 0 and epoch % self.keep_every == 0:
            targets.append(os.path.join(self.save_dir, f"checkpoint_{epoch}.pt"))
        state = {
            "model": self.model.module.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "epoch": epoch,
        }
        for target in targets:
            with path_manager.open(target, "wb") as handle:
                torch.save(state, handle)  # expect-preview: DDP014

    def fit(self):
        for epoch in range(self.epochs):
            for _ in range(100):
                loss = self.model(torch.randn(32, 64, device="cuda")).logsumexp(1).mean()
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            self.save_checkpoint(epoch)


if __name__ == "__main__":
    Trainer("checkpoints", keep_every=10, epochs=100).fit()
