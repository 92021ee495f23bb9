"""Detection trainer that builds its validation loader in two ways: on a
DistributedSampler when launched distributed, plainly otherwise. Under torchrun each rank
averages the loss of its own shard, and rank 0's shard-only figure is printed and written
to TensorBoard as the validation loss."""
import argparse
import statistics

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler
from torch.utils.tensorboard import SummaryWriter


def main(model, criterion, train_set, val_set):
    parser = argparse.ArgumentParser()
    parser.add_argument("--distributed", action="store_true")
    parser.add_argument("--epochs", type=int, default=30)
    opt = parser.parse_args()
    if opt.distributed:
        dist.init_process_group("nccl")
        train_sampler = DistributedSampler(train_set)
        val_sampler = DistributedSampler(val_set, shuffle=False)
        train_loader = DataLoader(train_set, batch_size=4, sampler=train_sampler)
        val_loader = DataLoader(val_set, batch_size=4, sampler=val_sampler)
    else:
        train_loader = DataLoader(train_set, batch_size=4, shuffle=True)
        val_loader = DataLoader(val_set, batch_size=4, shuffle=False)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    writer = SummaryWriter("runs")
    for epoch in range(opt.epochs):
        if opt.distributed:
            train_sampler.set_epoch(epoch)
        model.train()
        for batch, target in train_loader:
            loss = criterion(model(batch), target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        losses = []
        model.eval()
        with torch.no_grad():
            for batch, target in val_loader:
                losses.append(criterion(model(batch), target).item())
        val_loss = statistics.mean(losses)
        writer.add_scalar("val_loss", val_loss, epoch)  # expect: DDP038
