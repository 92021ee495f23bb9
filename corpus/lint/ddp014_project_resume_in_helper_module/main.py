"""Resumes from `checkpoint.pth` (read by `utils.io.resume_if_possible`), which the
epoch loop rewrites in place through `save_checkpoint(..., filename="checkpoint.pth")`.
The separate per-epoch files (`filename` left out: `checkpoint_0010.pth`) are fresh
files."""

import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset
from utils.io import resume_if_possible, save_checkpoint


def train_one_epoch(model, loader, optimizer):
    for x, y in loader:
        loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main(args):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    dataset = TensorDataset(torch.randn(2048, 16), torch.randint(0, 4, (2048,)))
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, batch_size=32, sampler=sampler)
    model = DDP(nn.Linear(16, 4).cuda(), device_ids=[local_rank])
    model_no_ddp = model.module
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    loaded_epoch, best_metrics = resume_if_possible(args.checkpoint_dir, model_no_ddp, optimizer)
    for epoch in range(loaded_epoch + 1, args.max_epoch):
        sampler.set_epoch(epoch)
        train_one_epoch(model, loader, optimizer)
        save_checkpoint(  # expect: DDP014
            args.checkpoint_dir,
            model_no_ddp,
            optimizer,
            epoch,
            best_metrics,
            filename="checkpoint.pth",
        )
        if epoch % args.save_every == 0:
            save_checkpoint(args.checkpoint_dir, model_no_ddp, optimizer, epoch, best_metrics)
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--checkpoint_dir", default="outputs")
    parser.add_argument("--max_epoch", type=int, default=720)
    parser.add_argument("--save_every", type=int, default=10)
    main(parser.parse_args())
