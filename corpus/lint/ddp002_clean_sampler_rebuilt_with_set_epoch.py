"""The loader is rebuilt every epoch for a new batch size, and its sampler is told the
epoch right after it is built."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    train_set = TensorDataset(torch.randn(16000, 40), torch.randint(0, 8, (16000,)))
    model = DDP(nn.Linear(40, 8).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for epoch in range(30):
        sampler = DistributedSampler(train_set, shuffle=True, drop_last=True)
        sampler.set_epoch(epoch)
        loader = DataLoader(train_set, batch_size=32 * (1 + epoch // 10), sampler=sampler)
        for x, y in loader:
            x, y = x.cuda(local_rank), y.cuda(local_rank)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
