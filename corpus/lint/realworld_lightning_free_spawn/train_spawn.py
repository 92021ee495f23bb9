"""Digit classifier on every GPU of one machine, started with mp.spawn instead of torchrun.

    python train_spawn.py --epochs 10
"""
import argparse
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.nn import functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torchvision import datasets, transforms


class SmallCNN(nn.Module):
    def __init__(self, classes=10, width=48):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, width, kernel_size=5, padding=2),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(width, 2 * width, kernel_size=5, padding=2),
            nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.head = nn.Sequential(nn.Flatten(), nn.Dropout(0.3), nn.Linear(2 * width * 49, classes))

    def forward(self, images):
        return self.head(self.features(images))


def join(rank, world):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29512")
    dist.init_process_group("nccl", rank=rank, world_size=world)


def save_atomically(payload, path):
    partial = f"{path}.partial"
    torch.save(payload, partial)
    os.replace(partial, path)


def worker(rank, world, opts):
    # single node: the spawn index is both the global rank and the GPU index
    join(rank, world)
    torch.cuda.set_device(rank)
    torch.manual_seed(opts.seed)

    to_tensor = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.13,), (0.31,))])
    digits = datasets.MNIST(opts.root, train=True, transform=to_tensor)
    shard = DistributedSampler(digits, num_replicas=world, rank=rank, shuffle=True, drop_last=True)
    loader = DataLoader(digits, batch_size=opts.batch, sampler=shard, num_workers=2, pin_memory=True)

    net = DDP(SmallCNN().to(rank), device_ids=[rank])
    adam = torch.optim.AdamW(net.parameters(), lr=opts.lr, weight_decay=1e-4)
    decay = torch.optim.lr_scheduler.ExponentialLR(adam, gamma=0.8)

    first = 0
    if opts.resume and os.path.exists(opts.ckpt):
        # saved from GPU 0: remap its tensors onto this rank's GPU
        state = torch.load(opts.ckpt, map_location={"cuda:0": f"cuda:{rank}"})
        net.module.load_state_dict(state["model"])
        adam.load_state_dict(state["optimizer"])
        decay.load_state_dict(state["scheduler"])
        first = state["epoch"] + 1

    for epoch in range(first, opts.epochs):
        shard.set_epoch(epoch)
        net.train()
        for step, (images, labels) in enumerate(loader):
            images = images.to(rank, non_blocking=True)
            labels = labels.to(rank, non_blocking=True)
            adam.zero_grad()
            loss = F.cross_entropy(net(images), labels)
            loss.backward()
            adam.step()
            if rank == 0 and step % opts.log_every == 0:
                done = step * len(images) * world
                print(f"epoch {epoch}: {done}/{len(digits)} images, loss {loss.item():.4f}")
        decay.step()

        if rank == 0:
            payload = {
                "model": net.module.state_dict(),
                "optimizer": adam.state_dict(),
                "scheduler": decay.state_dict(),
                "epoch": epoch,
            }
            save_atomically(payload, opts.ckpt)
        dist.barrier()  # nobody reads the checkpoint before rank 0 has written it

    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--root", default="data")
    ap.add_argument("--batch", type=int, default=128, help="per GPU")
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--log-every", type=int, default=100)
    ap.add_argument("--ckpt", default="digits.pt")
    ap.add_argument("--resume", action="store_true")
    opts = ap.parse_args()

    # fetch the files once, here, before the workers exist
    datasets.MNIST(opts.root, train=True, download=True)
    gpus = torch.cuda.device_count()
    mp.spawn(worker, args=(gpus, opts), nprocs=gpus, join=True)


if __name__ == "__main__":
    main()
