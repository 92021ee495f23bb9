"""Detection-style trainer: the sync-BN option only reaches the log line."""
import argparse
import logging
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

logger = logging.getLogger("train")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--syncbn", action="store_true")  # expect: DDP031
    opt = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    logger.info(f"batch {opt.batch} sync_bn={opt.syncbn}")
    data = TensorDataset(torch.randn(1600, 64), torch.randn(1600, 4))
    sampler = DistributedSampler(data, drop_last=True)
    loader = DataLoader(data, batch_size=opt.batch, sampler=sampler)
    model = nn.Sequential(nn.Linear(64, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 4))
    model = DDP(model.cuda(local_rank), device_ids=[local_rank])  # expect: DDP017
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for epoch in range(20):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.cuda(local_rank), y.cuda(local_rank)
            loss = nn.functional.smooth_l1_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
