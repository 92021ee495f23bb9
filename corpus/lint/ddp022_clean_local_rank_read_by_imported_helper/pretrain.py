"""Pre-training that keeps a --local_rank option for the old launcher, while the device
comes from the toolkit, whose runtime module reads the launcher's variable two imports away: under the
README's torchrun the option's default is never what picks the GPU."""
import argparse

import torch
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

from toolkit import setup_distributed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20000)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--local_rank", type=int, default=0)
    args = parser.parse_args()
    device = setup_distributed(args.local_rank)
    model = DDP(nn.Conv1d(80, 256, 3).to(device), device_ids=[device.index])
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for _ in range(args.steps):
        features = torch.randn(16, 80, 400, device=device)
        loss = model(features).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
