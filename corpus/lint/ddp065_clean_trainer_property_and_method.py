"""A trainer class whose rank test is a property (`self.is_main`, read without a call, as
a property is) beside a method called as one; `dist.is_initialized()` is called too."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


class Trainer:
    def __init__(self, build, loader):
        if not dist.is_initialized():
            dist.init_process_group("nccl")
        self.local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(self.local_rank)
        self.model = DistributedDataParallel(build().cuda(), device_ids=[self.local_rank])
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-3)
        self.loader = loader

    @property
    def is_main(self):
        return dist.get_rank() == 0

    def should_log(self, step):
        return step % 50 == 0 and dist.get_rank() == 0

    def fit(self, epochs):
        step = 0
        for epoch in range(epochs):
            self.loader.sampler.set_epoch(epoch)
            for x, y in self.loader:
                loss = torch.nn.functional.mse_loss(self.model(x.cuda()), y.cuda())
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                if self.should_log(step):
                    print(step, loss.item())
                step += 1
            if self.is_main:
                torch.save(self.model.module.state_dict(), "trainer_last.pt")  # expect-preview: DDP014
