"""One process per GPU: `python -m engine.ddp_trainer --world-size 4`."""
import argparse

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

from data import FrameLoader


def run(rank, cfg):
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:23456", rank=rank, world_size=cfg.world_size)
    torch.cuda.set_device(rank)
    model = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 3, 3, padding=1))
    model = DDP(model.cuda(rank), device_ids=[rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    train = FrameLoader(cfg, rank, "train")
    for epoch in range(cfg.epochs):
        model.train()
        train.start_epoch(epoch)
        for blurred, sharp in train:
            loss = nn.functional.l1_loss(model(blurred.cuda(rank)), sharp.cuda(rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if rank == 0:
            torch.save(model.module.state_dict(), f"deblur_{epoch:03d}.pth")
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-root", dest="data_root", default="./frames")
    parser.add_argument("--world-size", dest="world_size", type=int, default=4)
    parser.add_argument("--batch-size", dest="batch_size", type=int, default=8)
    parser.add_argument("--crop", type=int, default=256)
    parser.add_argument("--epochs", type=int, default=500)
    parser.add_argument("--lr", type=float, default=1e-4)
    cfg = parser.parse_args()
    cfg.distributed = True
    mp.spawn(run, args=(cfg,), nprocs=cfg.world_size)
