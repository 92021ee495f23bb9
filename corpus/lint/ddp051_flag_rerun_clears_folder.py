"""A torchrun trainer that wipes its log folder when `--overwrite` is given: every rank
runs `shutil.rmtree` on the same folder."""

import argparse
import os
import shutil

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def prepare_dirs(args):
    log_dir = os.path.join(args.out, "tensorboard")
    if args.overwrite and os.path.isdir(log_dir):
        shutil.rmtree(log_dir)  # expect: DDP051
    os.makedirs(log_dir, exist_ok=True)
    return log_dir


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="outputs")
    parser.add_argument("--overwrite", action="store_true")
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    prepare_dirs(args)
    model = DDP(torch.nn.Linear(32, 4).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    train_set = TensorDataset(torch.randn(512, 32), torch.randint(0, 4, (512,)))
    sampler = DistributedSampler(train_set, shuffle=True, drop_last=True)
    loader = DataLoader(train_set, batch_size=32, sampler=sampler, num_workers=2)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.cuda(local_rank, non_blocking=True), y.cuda(local_rank, non_blocking=True)
            loss = torch.nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
