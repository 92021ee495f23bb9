"""The early-stopping object is fed a validation loss all-reduced over the ranks: every
rank's object sees the same numbers and stops at the same epoch."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Stopper:
    def __init__(self, patience):
        self.patience, self.best, self.wait, self.should_stop = patience, float("inf"), 0, False

    def step(self, metric):
        if metric < self.best:
            self.best, self.wait = metric, 0
        else:
            self.wait += 1
            self.should_stop = self.wait >= self.patience


def main():
    dist.init_process_group("nccl")
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    train_set = TensorDataset(torch.randn(2048, 32), torch.randn(2048, 1))
    val_set = TensorDataset(torch.randn(512, 32), torch.randn(512, 1))
    sampler = DistributedSampler(train_set)
    train_loader = DataLoader(train_set, batch_size=64, sampler=sampler)
    val_loader = DataLoader(val_set, batch_size=64, sampler=DistributedSampler(val_set))  # expect-preview: DDP003
    model = DDP(nn.Linear(32, 1).cuda(), device_ids=[rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    stopper = Stopper(patience=3)
    for epoch in range(100):
        sampler.set_epoch(epoch)
        for x, y in train_loader:
            optimizer.zero_grad()
            nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
            optimizer.step()
        total = torch.zeros(2, device="cuda")
        with torch.no_grad():
            for x, y in val_loader:
                total[0] += nn.functional.mse_loss(model(x.cuda()), y.cuda(), reduction="sum")
                total[1] += len(y)
        dist.all_reduce(total)
        stopper.step((total[0] / total[1]).item())
        if stopper.should_stop:
            break
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
