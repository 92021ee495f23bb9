"""A step-based trainer keeps resumable checkpoints (`ckpt_<step>.pth`) and slim weight
exports (`model_<step>.pth`) in one folder, and resumes from the newest `ckpt_*.pth` it
finds there. The checkpoint written in place is the one a restart loads; the exports are
never listed by the resume and are no part of it."""

import os
import re
from glob import glob

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class StepTrainer:
    def __init__(self, project_dir, max_step=200_000, ckpt_every=5_000, export_every=20_000):
        self.local_rank = int(os.environ["LOCAL_RANK"])
        self.rank = dist.get_rank()
        self.folder = os.path.join(project_dir, "checkpoint")
        self.max_step, self.ckpt_every, self.export_every = max_step, ckpt_every, export_every
        self.model = DDP(nn.Linear(512, 512).cuda(self.local_rank), device_ids=[self.local_rank])
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=3e-4)
        self.step = 0
        found = glob(os.path.join(project_dir, "checkpoint/ckpt_*.pth"))
        if found:
            found.sort(key=lambda p: int(re.search(r"ckpt_(\d+)\.pth", p).group(1)))
            self.load(found[-1])

    def load(self, path):
        state = torch.load(path, map_location=f"cuda:{self.local_rank}")
        self.model.module.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.step = state["step"]

    def train(self):
        while self.step < self.max_step:
            self.step += 1
            x = torch.randn(32, 512, device=f"cuda:{self.local_rank}")
            loss = self.model(x).pow(2).mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            if self.rank != 0:
                continue
            if self.step % self.ckpt_every == 0:
                state = {
                    "model": self.model.module.state_dict(),
                    "optimizer": self.optimizer.state_dict(),
                    "step": self.step,
                }
                ckpt_path = os.path.join(self.folder, f"ckpt_{self.step}.pth")
                torch.save(state, ckpt_path)  # expect: DDP014
            if self.step % self.export_every == 0:
                export_path = os.path.join(self.folder, f"model_{self.step}.pth")
                torch.save(self.model.module.state_dict(), export_path)


def main():
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    dist.init_process_group("nccl")
    StepTrainer("runs/face").train()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
