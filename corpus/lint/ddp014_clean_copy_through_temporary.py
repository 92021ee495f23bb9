"""The epoch checkpoint is copied onto the resume file through a temporary copy renamed
into place: the resume file always holds a complete checkpoint."""
import os
import shutil

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def save_state(state, out_dir, step):
    path = os.path.join(out_dir, f"step_{step:07d}.pt")
    torch.save(state, path)
    staging = os.path.join(out_dir, "latest.pt.tmp")
    shutil.copyfile(path, staging)
    os.replace(staging, os.path.join(out_dir, "latest.pt"))


def main(out_dir="runs", steps=10000, every=500):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    blob = torch.load("tokens.pt", map_location="cpu")
    dataset = TensorDataset(blob["x"], blob["y"])
    model = DDP(nn.Linear(256, 256).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, batch_size=16, sampler=sampler)
    latest = os.path.join(out_dir, "latest.pt")
    step = 0
    if os.path.exists(latest):
        state = torch.load(latest, map_location="cpu")
        model.module.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        step = state["step"]
    epoch = 0
    while step < steps:
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            if step % every == 0 and dist.get_rank() == 0:
                state = {
                    "model": model.module.state_dict(),
                    "optimizer": optimizer.state_dict(),
                    "step": step,
                }
                save_state(state, out_dir, step)
        epoch += 1
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
