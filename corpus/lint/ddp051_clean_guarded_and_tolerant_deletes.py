"""A torchrun trainer that clears old files the safe ways: rank 0 deletes the previous best
model before a barrier, every rank removes its own per-rank scratch file, and a shared
cache folder is removed with `ignore_errors=True`."""

import argparse
import os
import shutil

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--output_dir", default="outputs")
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    best = os.path.join(args.output_dir, "best-model.pt")
    if rank == 0 and os.path.exists(best):
        os.remove(best)
    dist.barrier()
    scratch = os.path.join(args.output_dir, f"scratch_rank{rank}.bin")
    if os.path.exists(scratch):
        os.remove(scratch)
    shutil.rmtree(os.path.join(args.output_dir, "cache"), ignore_errors=True)
    try:
        os.remove(os.path.join(args.output_dir, "last.lock"))
    except FileNotFoundError:
        pass

    model = DDP(torch.nn.Linear(32, 4).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    train_set = TensorDataset(torch.randn(512, 32), torch.randint(0, 4, (512,)))
    sampler = DistributedSampler(train_set, shuffle=True, drop_last=True)
    loader = DataLoader(train_set, batch_size=32, sampler=sampler, num_workers=2)
    for epoch in range(args.epochs):
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
