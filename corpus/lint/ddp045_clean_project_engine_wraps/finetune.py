"""Fine-tuning launched with torchrun: the project's training loop wraps the model."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from engine import train


def main(args):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    train_set = TensorDataset(torch.randn(8192, 128), torch.randn(8192, 1))
    val_set = TensorDataset(torch.randn(512, 128), torch.randn(512, 1))
    sampler = DistributedSampler(train_set, shuffle=True, drop_last=True)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, sampler=sampler)
    val_loader = DataLoader(val_set, batch_size=args.batch_size)
    model = nn.Sequential(nn.Linear(128, 256), nn.GELU(), nn.Linear(256, 1)).to(device)
    state = torch.load(args.pretrained, map_location=device)
    model.load_state_dict(state)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=1e-5)
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[25, 50])
    model = train(
        model,
        train_loader,
        val_loader,
        optimizer,
        scheduler,
        device,
        args.epochs,
        args.out_dir,
    )
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--pretrained", default="pretrained.pt")
    parser.add_argument("--out-dir", default="out")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--epochs", type=int, default=60)
    parser.add_argument("--lr", type=float, default=5e-4)
    main(parser.parse_args())
