"""`--resume` takes any path, but what the script reads from it (model, optimizer, epoch)
is exactly the checkpoint it writes itself from its GPU model: every rank loads it onto
GPU 0."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--resume", default="")
    parser.add_argument("--out", default="work_dir")
    parser.add_argument("--epochs", type=int, default=60)
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    blob = torch.load("volumes.pt", map_location="cpu")
    dataset = TensorDataset(blob["x"], blob["y"])
    model = DDP(nn.Linear(96, 3).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=8e-4)
    start_epoch = 0
    if args.resume:
        checkpoint = torch.load(args.resume)  # expect: DDP033
        model.module.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        start_epoch = checkpoint["epoch"] + 1
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, batch_size=8, sampler=sampler)
    for epoch in range(start_epoch, args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            torch.save(
                {
                    "model": model.module.state_dict(),
                    "optimizer": optimizer.state_dict(),
                    "epoch": epoch,
                },
                os.path.join(args.out, f"epoch_{epoch:03d}.pth"),
            )
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
