"""The single-GPU sibling of a DDP trainer: it skips a batch whose forward raises, and a
batch with a non-finite loss. It still imports `torch.distributed` (copied from the DDP
script), but starts no process group, spawns nothing and wraps nothing in DDP, so there is
no other rank to wait in an all-reduce."""
import argparse

import torch
import torch.distributed as dist  # noqa: F401
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def train_one_epoch(model, loader, optimizer, device):
    model.train()
    skipped = 0
    for images, masks in loader:
        images, masks = images.to(device), masks.to(device)
        try:
            logits = model(images)
        except RuntimeError:
            skipped += 1
            continue
        loss = nn.functional.binary_cross_entropy_with_logits(logits, masks)
        if not torch.isfinite(loss):
            skipped += 1
            continue
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return skipped


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--device", default="cuda")
    args = parser.parse_args()
    data = TensorDataset(torch.randn(256, 1, 64, 64), torch.randint(0, 2, (256, 1, 64, 64)).float())
    loader = DataLoader(data, batch_size=8, shuffle=True)
    model = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 1, 1)).to(args.device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(args.epochs):
        skipped = train_one_epoch(model, loader, optimizer, args.device)
        print(f"epoch {epoch}: skipped {skipped} batches")


if __name__ == "__main__":
    main()
