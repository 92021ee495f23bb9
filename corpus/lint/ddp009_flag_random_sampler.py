"""Mixed-precision training that swapped DistributedSampler for a RandomSampler."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as Wrapped
from torch.utils.data import DataLoader, Dataset, RandomSampler


class Patches(Dataset):
    def __init__(self, root):
        self.files = sorted(os.path.join(root, f) for f in os.listdir(root))

    def __len__(self):
        return len(self.files)

    def __getitem__(self, idx):
        sample = torch.load(self.files[idx])
        return sample["image"], sample["mask"]


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--root", default="patches")
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--lr", type=float, default=2e-4)
    return p.parse_args()


def main():
    args = parse()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    net = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 1, 1))
    model = Wrapped(net.cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scaler = torch.amp.GradScaler("cuda")
    dataset = Patches(args.root)
    loader = DataLoader(dataset, batch_size=16, sampler=RandomSampler(dataset), num_workers=8)  # expect: DDP009
    for epoch in range(args.epochs):
        for image, mask in loader:
            image = image.cuda(local_rank, non_blocking=True)
            mask = mask.cuda(local_rank, non_blocking=True)
            with torch.autocast("cuda", dtype=torch.float16):
                logits = model(image)
                loss = nn.functional.binary_cross_entropy_with_logits(logits, mask)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
