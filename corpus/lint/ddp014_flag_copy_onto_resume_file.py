"""Each epoch's checkpoint gets its own name, then is copied onto `current.pth`, the file
`--auto-resume` reads: the copy rewrites the resume file in place."""
import argparse
import os
import shutil

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def save_state(state, out_dir, epoch):
    path = os.path.join(out_dir, f"ckpt_{epoch:04d}.pth")
    torch.save(state, path)
    shutil.copyfile(path, os.path.join(out_dir, "current.pth"))  # expect-preview: DDP014


def export(state, out_dir):
    path = os.path.join(out_dir, "weights.pth")
    torch.save(state, path)
    shutil.copy(path, os.path.join(out_dir, "release", "weights.pth"))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=200)
    parser.add_argument("--out", default="output")
    parser.add_argument("--auto-resume", action="store_true")
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    blob = torch.load("features.pt", map_location="cpu")
    dataset = TensorDataset(blob["x"], blob["y"])
    net = DDP(nn.Linear(128, 100).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(net.parameters(), lr=1e-3)
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, batch_size=128, sampler=sampler)
    start = 0
    current = os.path.join(args.out, "current.pth")
    if args.auto_resume and os.path.isfile(current):
        ckpt = torch.load(current, map_location="cpu")
        net.module.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        start = ckpt["epoch"] + 1
    for epoch in range(start, args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(net(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            state = {
                "model": net.module.state_dict(),
                "optimizer": optimizer.state_dict(),
                "epoch": epoch,
            }
            save_state(state, args.out, epoch)
        dist.barrier()
    if dist.get_rank() == 0:
        export({"model": net.module.state_dict()}, args.out)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
