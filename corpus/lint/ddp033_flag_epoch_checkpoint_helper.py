"""Detector trainer: the checkpoint helpers save from the GPU model under rank 0 and load
the newest epoch file on every rank (`from torch import load`), the loss scaler too."""
import glob
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch import load, save
from torch.nn.parallel import DistributedDataParallel


def save_checkpoint(ckpt_dir, epoch, model, optimizer):
    if dist.get_rank() != 0:
        return
    state = {"net": model.module.state_dict(), "opt": optimizer.state_dict(), "epoch": epoch}
    save(state, f"{ckpt_dir}/epoch_{epoch:03d}.pt")  # expect: DDP014


def resume(ckpt_dir, model, optimizer):
    files = sorted(glob.glob(os.path.join(ckpt_dir, "epoch_*.pt")))
    if not files:
        return 0
    state = load(files[-1], map_location=None)  # expect: DDP033
    model.module.load_state_dict(state["net"])
    optimizer.load_state_dict(state["opt"])
    return state["epoch"] + 1


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl")
    model = DistributedDataParallel(nn.Linear(64, 10).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    start = resume("checkpoints", model, optimizer)
    for epoch in range(start, 30):
        x = torch.randn(16, 64, device="cuda")
        loss = model(x).square().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        save_checkpoint("checkpoints", epoch, model, optimizer)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
