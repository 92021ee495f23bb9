"""A trainer whose step counters are defined through each other (`self.global_step =
self.step`, then `self.step = self.global_step % self.anneal_steps` when a schedule
restarts): asking whether `self.global_step % self.log_every == 0` is a rank test must
end (it is not one), and the save under the real rank test is followed by a barrier on
every rank."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Trainer:
    def __init__(self, model, loader, sampler, resume_step=0, anneal_steps=1000):
        self.model = model
        self.loader = loader
        self.sampler = sampler
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
        self.anneal_steps = anneal_steps
        self.load(resume_step)
        self.global_step = self.step
        if self.global_step >= self.anneal_steps:
            self.step = self.global_step % self.anneal_steps
        self.log_every = 50

    def load(self, resume_step):
        self.step = resume_step

    def run(self, epochs):
        for epoch in range(epochs):
            self.sampler.set_epoch(epoch)
            for x, y in self.loader:
                loss = self.run_step(x, y)
                if self.global_step % self.log_every == 0:
                    dist.all_reduce(loss)
            self.save()

    def run_step(self, x, y):
        loss = nn.functional.mse_loss(self.model(x.cuda()), y.cuda())
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.step += 1
        self.global_step += 1
        return loss.detach()

    def save(self):
        if dist.get_rank() == 0:
            path = f"checkpoints/model_{self.global_step:07d}.pt"
            torch.save(self.model.module.state_dict(), path)
        dist.barrier()


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    data = TensorDataset(torch.randn(256, 4), torch.randn(256, 1))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=8, sampler=sampler)
    model = DDP(nn.Linear(4, 1).cuda(local_rank), device_ids=[local_rank])
    Trainer(model, loader, sampler).run(epochs=3)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
