"""An image classifier resumes its cosine schedule on rank 0 only: the ranks then step
with different learning rates every epoch."""

import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(nn.Linear(20, 10).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=90)
    if dist.get_rank() == 0 and os.path.exists("sched.pt"):
        scheduler.load_state_dict(torch.load("sched.pt"))  # expect: DDP044
    data = TensorDataset(torch.randn(200, 20), torch.randint(0, 10, (200,)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=10, sampler=sampler)
    for epoch in range(90):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        scheduler.step()


if __name__ == "__main__":
    main()
