"""The single-GPU script leaves the helper's `dist` at its default (False): no
DistributedSampler exists, so there is no epoch to set (the loader reshuffles itself)."""
import argparse

import torch

from data_utils import build_loader


def main(model, dataset):
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--world_size", type=int, default=1, help="kept for the DDP script's configs")
    args = parser.parse_args()
    loader, _ = build_loader(dataset, batch_size=8)
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    for epoch in range(args.epochs):
        for batch in loader:
            loss = model(**batch).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
