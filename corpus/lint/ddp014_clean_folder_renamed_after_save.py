"""Fills a checkpoint folder under a temporary name and renames the folder once the file is
complete: a crash mid-write leaves only `checkpoint_in_progress`, which the resume skips."""
import os
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

ROOT = Path("saved_models/train_checkpoints")


def latest_checkpoint():
    done = sorted(ROOT.glob("step_*"), key=lambda p: int(p.name.split("_")[1]))
    return done[-1] / "trainer" if done else None


def save(model, optimizer, step):
    checkpoint_path = ROOT / "checkpoint_in_progress"
    checkpoint_path.mkdir(parents=True, exist_ok=True)
    state = {"model": model.module.state_dict(), "optimizer": optimizer.state_dict()}
    torch.save(state, checkpoint_path / "trainer")
    checkpoint_path.replace(ROOT / f"step_{step}")


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(nn.Linear(768, 2).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    resume = latest_checkpoint()
    if resume is not None:
        state = torch.load(resume, map_location="cpu")
        model.module.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
    for step in range(1, 10001):
        loss = model(torch.randn(32, 768).cuda()).logsumexp(-1).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 1000 == 0 and dist.get_rank() == 0:
            save(model, optimizer, step)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
