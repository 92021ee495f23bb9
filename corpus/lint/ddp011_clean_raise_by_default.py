"""A trainer whose step can either raise on a non-finite loss or skip it quietly. The quiet
skip would leave the other ranks waiting in the gradient all-reduce, but no call asks for
it: the only call keeps `raise_on_error=True`, so a bad loss raises and torchrun stops the
job."""
import math
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Trainer:
    def __init__(self, local_rank):
        self.model = DDP(nn.Linear(32, 1).cuda(), device_ids=[local_rank])
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.01)
        data = TensorDataset(torch.randn(2048, 32), torch.randn(2048, 1))
        self.sampler = DistributedSampler(data, shuffle=True, drop_last=True)
        self.loader = DataLoader(data, batch_size=32, sampler=self.sampler)

    def _optimize_on_batch(self, x, y, raise_on_error=True):
        self.optimizer.zero_grad(set_to_none=True)
        loss = nn.functional.mse_loss(self.model(x.cuda()), y.cuda())
        if not math.isfinite(loss.item()):
            message = f"loss is {loss.item()}, stopping"
            if raise_on_error:
                raise FloatingPointError(message)
            else:
                return
        loss.backward()
        self.optimizer.step()

    def fit(self, epochs):
        for epoch in range(epochs):
            self.sampler.set_epoch(epoch)
            for x, y in self.loader:
                self._optimize_on_batch(x, y)


if __name__ == "__main__":
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    Trainer(local_rank).fit(epochs=20)
    dist.destroy_process_group()
