"""Segmentation training with an early-stopping helper object: each rank feeds it the
validation loss of its own shard, and its own `early_stop` flag decides the `break`."""
import os

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class EarlyStopping:
    def __init__(self, patience=5, delta=0.0):
        self.patience = patience
        self.delta = delta
        self.best = np.inf
        self.bad_epochs = 0
        self.early_stop = False

    def __call__(self, val_loss):
        if val_loss < self.best - self.delta:
            self.best = val_loss
            self.bad_epochs = 0
        else:
            self.bad_epochs += 1
            if self.bad_epochs >= self.patience:
                self.early_stop = True


def train(rank, world_size):
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    torch.cuda.set_device(rank)
    train_set = TensorDataset(torch.randn(1024, 3, 64, 64), torch.randint(0, 3, (1024, 64, 64)))
    val_set = TensorDataset(torch.randn(256, 3, 64, 64), torch.randint(0, 3, (256, 64, 64)))
    train_sampler = DistributedSampler(train_set)
    train_loader = DataLoader(train_set, batch_size=16, sampler=train_sampler)
    val_loader = DataLoader(val_set, batch_size=16, sampler=DistributedSampler(val_set))
    model = DDP(nn.Conv2d(3, 3, 3, padding=1).cuda(rank), device_ids=[rank])
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    stopper = EarlyStopping(patience=5)
    for epoch in range(50):
        model.train()
        train_sampler.set_epoch(epoch)
        for images, masks in train_loader:
            optimizer.zero_grad()
            loss = criterion(model(images.cuda(rank)), masks.cuda(rank))
            loss.backward()
            optimizer.step()
        model.eval()
        val_loss = 0.0
        with torch.no_grad():
            for images, masks in val_loader:
                val_loss += criterion(model(images.cuda(rank)), masks.cuda(rank)).item()
        stopper(val_loss / len(val_loader))
        if stopper.early_stop:
            print(f"rank {rank}: early stop at epoch {epoch}")
            break  # expect: DDP039
    dist.destroy_process_group()


if __name__ == "__main__":
    os.environ.setdefault("MASTER_ADDR", "localhost")
    os.environ.setdefault("MASTER_PORT", "29500")
    n = torch.cuda.device_count()
    mp.spawn(train, args=(n,), nprocs=n)
