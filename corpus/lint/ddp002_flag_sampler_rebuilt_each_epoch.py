"""Progressive batch size: the loader (and its sampler) is rebuilt at the top of every epoch
with the batch size of the schedule, over the same dataset, and never told the epoch."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

SCHEDULE = {0: 32, 10: 64, 20: 128}


def batch_size_for(epoch):
    return max(size for start, size in SCHEDULE.items() if epoch >= start)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    train_set = TensorDataset(torch.randn(16000, 40), torch.randint(0, 8, (16000,)))
    model = DDP(nn.Linear(40, 8).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for epoch in range(30):  # expect: DDP002
        sampler = DistributedSampler(train_set, shuffle=True, drop_last=True)
        loader = DataLoader(train_set, batch_size=batch_size_for(epoch), sampler=sampler)
        for x, y in loader:
            x, y = x.cuda(local_rank), y.cuda(local_rank)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
