"""Triplet-loss face embedding trainer launched with torchrun; the whole epoch loop sits in
a try whose handler only logs, then the final checkpoint is written."""
import argparse
import logging
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

logger = logging.getLogger("facetrain")


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=40)
    parser.add_argument("--margin", type=float, default=0.3)
    parser.add_argument("--out", default="embedder.pt")
    return parser.parse_args()


def train_one_epoch(model, loader, criterion, optimizer, device):
    model.train()
    total = 0.0
    for anchor, positive, negative in loader:
        anchor, positive, negative = anchor.to(device), positive.to(device), negative.to(device)
        loss = criterion(model(anchor), model(positive), model(negative))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total / max(len(loader), 1)


def main():
    args = parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    triplets = torch.load("triplets.pt")
    data = TensorDataset(triplets["a"], triplets["p"], triplets["n"])
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=128, sampler=sampler, num_workers=4)
    embedder = nn.Sequential(nn.Flatten(), nn.Linear(3 * 112 * 112, 512), nn.ReLU(), nn.Linear(512, 128))
    model = DDP(embedder.to(device), device_ids=[local_rank])
    criterion = nn.TripletMarginLoss(margin=args.margin)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    try:
        for epoch in range(args.epochs):
            sampler.set_epoch(epoch)
            loss = train_one_epoch(model, loader, criterion, optimizer, device)
            if dist.get_rank() == 0:
                logger.info("epoch %d loss %.4f", epoch, loss)
    except Exception as e:  # expect: DDP060
        logger.error(e)
    finally:
        if dist.get_rank() == 0:
            torch.save(model.module.state_dict(), args.out)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
