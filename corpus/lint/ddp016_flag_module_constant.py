"""DDP options kept as module constants at the top of the script."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as Wrap
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

BATCH_SIZE = 64
EPOCHS = 4
FIND_UNUSED = True
BUCKET_MB = 50


def build(local_rank):
    net = nn.Sequential(nn.Conv1d(4, 16, 3), nn.ReLU(), nn.Flatten(), nn.Linear(16 * 30, 3))
    net = net.cuda(local_rank)
    return Wrap(
        net,
        device_ids=[local_rank],
        bucket_cap_mb=BUCKET_MB,
        find_unused_parameters=FIND_UNUSED,  # expect: DDP016
    )


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl")
    model = build(local_rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    data = TensorDataset(torch.randn(3000, 4, 32), torch.randint(0, 3, (3000,)))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=BATCH_SIZE, sampler=sampler)
    for epoch in range(EPOCHS):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.cuda(local_rank, non_blocking=True), y.cuda(local_rank, non_blocking=True)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
