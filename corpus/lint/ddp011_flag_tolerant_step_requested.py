"""The same kind of step, but the loop asks for the tolerant mode: with
`stop_on_bad_loss=False` a rank whose loss is not finite returns before `backward()`,
and the other ranks wait in DDP's gradient all-reduce."""
import math
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Learner:
    def __init__(self, local_rank):
        self.model = DDP(nn.Linear(32, 1).cuda(), device_ids=[local_rank])
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.01)
        data = TensorDataset(torch.randn(2048, 32), torch.randn(2048, 1))
        self.sampler = DistributedSampler(data, shuffle=True, drop_last=True)
        self.loader = DataLoader(data, batch_size=32, sampler=self.sampler)

    def _update(self, x, y, stop_on_bad_loss=True):
        self.optimizer.zero_grad(set_to_none=True)
        loss = nn.functional.mse_loss(self.model(x.cuda()), y.cuda())
        if not math.isfinite(loss.item()):
            if stop_on_bad_loss:
                raise FloatingPointError(f"loss is {loss.item()}")
            return  # expect: DDP011
        loss.backward()
        self.optimizer.step()

    def fit(self, epochs):
        for epoch in range(epochs):
            self.sampler.set_epoch(epoch)
            for x, y in self.loader:
                self._update(x, y, stop_on_bad_loss=False)


if __name__ == "__main__":
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    Learner(local_rank).fit(epochs=20)
    dist.destroy_process_group()
