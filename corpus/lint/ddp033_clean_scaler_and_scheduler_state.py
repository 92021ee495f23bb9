"""Resuming the mixed-precision scaler and the LR schedule from their own files: a
GradScaler's and a scheduler's state_dict() hold Python floats and ints, so loading
them without map_location puts nothing on any GPU. The model is loaded onto the CPU."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.cuda.amp import GradScaler
from torch.nn.parallel import DistributedDataParallel as DDP


def save_atomic(obj, path):
    torch.save(obj, path + ".tmp")
    os.replace(path + ".tmp", path)


def main(run_dir):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(nn.Linear(64, 64).cuda(), device_ids=[local_rank])
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    lr_schedule = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=1000)
    scaler = GradScaler()
    if os.path.exists(os.path.join(run_dir, "model.pt")):
        model.module.load_state_dict(torch.load(os.path.join(run_dir, "model.pt"), map_location="cpu"))
        scaler.load_state_dict(torch.load(os.path.join(run_dir, "scaler.pt")))
        lr_schedule.load_state_dict(torch.load(os.path.join(run_dir, "schedule.pt")))
    for step in range(1000):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(torch.randn(32, 64, device="cuda")).pow(2).mean()
        opt.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        lr_schedule.step()
        if dist.get_rank() == 0 and step % 100 == 0:
            save_atomic(model.module.state_dict(), os.path.join(run_dir, "model.pt"))
            save_atomic(scaler.state_dict(), os.path.join(run_dir, "scaler.pt"))
            save_atomic(lr_schedule.state_dict(), os.path.join(run_dir, "schedule.pt"))


if __name__ == "__main__":
    main("runs/latest")
