"""A step-based fine-tuning script that reads its loader through `itertools.cycle`."""
import itertools
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

MAX_STEPS = 20_000


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    train_set = TensorDataset(torch.randn(5000, 16), torch.randint(0, 4, (5000,)))
    sampler = DistributedSampler(train_set, shuffle=True, drop_last=True)
    loader = DataLoader(train_set, batch_size=64, sampler=sampler, num_workers=2)
    batches = itertools.cycle(loader)  # expect: DDP002
    model = DDP(nn.Linear(16, 4).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for step in range(MAX_STEPS):
        x, y = next(batches)
        loss = nn.functional.cross_entropy(model(x.cuda(local_rank)), y.cuda(local_rank))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
