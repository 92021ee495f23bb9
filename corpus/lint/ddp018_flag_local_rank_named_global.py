"""A trainer class that takes its "local rank" from `dist.get_rank()`, the global rank, while
the entry point set the device from LOCAL_RANK: on a second node the rank exceeds the GPU
count."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Trainer:
    def __init__(self, lr):
        local_rank = dist.get_rank()
        self.local_rank = local_rank
        self.model = DDP(  # expect-preview: DDP018
            nn.Linear(64, 10).cuda(),
            device_ids=[local_rank],
            output_device=local_rank,
        )
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=lr)

    def step(self, x, y):
        loss = nn.functional.cross_entropy(self.model(x.cuda()), y.cuda())
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.detach()


def main():
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    dist.init_process_group("nccl")
    trainer = Trainer(lr=3e-4)
    data = TensorDataset(torch.randn(4096, 64), torch.randint(0, 10, (4096,)))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=64, sampler=sampler)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x, y in loader:
            trainer.step(x, y)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
