"""Each epoch the trainer rewrites `checkpoint.pth.tar`, which `--resume` reads, and then
copies it to a file named for the epoch. A crash while the checkpoint is written leaves the
previous epoch's copy complete beside it, so the save is only shown under --preview."""
import argparse
import os
import shutil

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--resume", default="")
    parser.add_argument("--save-dir", default="work")
    parser.add_argument("--epochs", type=int, default=90)
    args = parser.parse_args()
    dist.init_process_group("nccl")
    gpu = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(gpu)
    train_set = TensorDataset(torch.randn(8192, 3, 32, 32), torch.randint(0, 10, (8192,)))
    sampler = DistributedSampler(train_set)
    loader = DataLoader(train_set, batch_size=128, sampler=sampler, num_workers=4)
    model = DDP(nn.Sequential(nn.Flatten(), nn.Linear(3072, 10)).cuda(gpu), device_ids=[gpu])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    start_epoch = 0
    if args.resume:
        checkpoint = torch.load(args.resume, map_location=f"cuda:{gpu}")
        model.module.load_state_dict(checkpoint["state_dict"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        start_epoch = checkpoint["epoch"]
    for epoch in range(start_epoch, args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        for images, target in loader:
            loss = nn.functional.cross_entropy(model(images.cuda(gpu)), target.cuda(gpu))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            path = os.path.join(args.save_dir, "checkpoint.pth.tar")
            torch.save(  # expect-preview: DDP014
                {
                    "epoch": epoch + 1,
                    "state_dict": model.module.state_dict(),
                    "optimizer": optimizer.state_dict(),
                },
                path,
            )
            shutil.copyfile(path, os.path.join(args.save_dir, f"checkpoint_{epoch:03d}.pth.tar"))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
