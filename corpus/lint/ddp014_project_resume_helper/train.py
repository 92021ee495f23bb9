"""Trains with resume: `checkpoint.pth` in the output folder is where a restarted job
picks up. The helpers of `ckpt_utils` write it straight onto its final name."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

import ckpt_utils
from ckpt_utils import save_epoch, save_snapshot


def train_one_epoch(model, loader, optimizer, local_rank):
    for x, y in loader:
        loss = nn.functional.cross_entropy(model(x.cuda(local_rank)), y.cuda(local_rank))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=90)
    parser.add_argument("--out", default="runs/exp")
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    blob = torch.load("train.pt", map_location="cpu")
    dataset = TensorDataset(blob["x"], blob["y"])
    model = DDP(nn.Linear(32, 10).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, batch_size=64, sampler=sampler)
    start_epoch = 0
    resume_file = os.path.join(args.out, "checkpoint.pth")
    if os.path.exists(resume_file):
        start_epoch = ckpt_utils.load_checkpoint(resume_file, model.module, optimizer)
    for epoch in range(start_epoch, args.epochs):
        sampler.set_epoch(epoch)
        train_one_epoch(model, loader, optimizer, local_rank)
        state = {
            "model": model.module.state_dict(),
            "optimizer": optimizer.state_dict(),
            "epoch": epoch,
        }
        if dist.get_rank() == 0:
            ckpt_utils.save_checkpoint(state, epoch % 10 == 0, args.out)  # expect: DDP014
            save_snapshot(state, os.path.join(args.out, "snapshot.pth"))
            save_epoch(state, args.out, epoch)
            ckpt_utils.save_checkpoint(state, False, args.out, f"ep{epoch}.pth")
        dist.barrier()
    if dist.get_rank() == 0:
        ckpt_utils.save_checkpoint(state, False, args.out, "final.pth")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
