"""The resume file `checkpoint.pt` is rewritten in place every epoch (a crash mid-write
loses it); `checkpoint_fid.pt`, the weights with the best FID so far, is read back by
nothing, so a torn write of it costs one evaluation's weights."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def fid_of(model):
    return float(torch.rand(()))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--save", default="runs/exp")
    parser.add_argument("--cont_training", action="store_true")
    parser.add_argument("--epochs", type=int, default=400)
    args = parser.parse_args()
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(nn.Linear(256, 256).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    checkpoint_file = os.path.join(args.save, "checkpoint.pt")
    start = 0
    if args.cont_training:
        checkpoint = torch.load(checkpoint_file, map_location="cpu")
        model.module.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        start = checkpoint["epoch"]
    best_fid = float("inf")
    for epoch in range(start, args.epochs):
        x = torch.randn(64, 256, device="cuda")
        loss = (model(x) - x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        fid = fid_of(model)
        if fid < best_fid and dist.get_rank() == 0:
            best_fid = fid
            torch.save({"model": model.module.state_dict()}, os.path.join(args.save, "checkpoint_fid.pt"))  # expect-preview: DDP014
        if dist.get_rank() == 0:
            state = {"model": model.module.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch + 1}
            torch.save(state, checkpoint_file)  # expect: DDP014
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
