"""Non-OOM errors propagate; an OOM prints a memory report and exits the process."""
import sys
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def step(model, optimizer, x, y):
    try:
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
    except RuntimeError as err:
        if "out of memory" not in str(err):
            raise
        print(torch.cuda.memory_summary(), file=sys.stderr)
        sys.exit(1)
    optimizer.step()
    optimizer.zero_grad()


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    blob = torch.load("train.pt")
    dataset = TensorDataset(blob["x"], blob["y"])
    model = DDP(nn.Linear(64, 64).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters())
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, batch_size=32, sampler=sampler)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x, y in loader:
            step(model, optimizer, x.cuda(local_rank), y.cuda(local_rank))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
