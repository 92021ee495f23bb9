"""Linear learning-rate scaling by the number of GPUs, counted on this machine only."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

BASE_LR = 0.1
BATCH_PER_GPU = 64


def setup():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    return local_rank


def main():
    local_rank = setup()
    num_gpus = torch.cuda.device_count()
    lr = BASE_LR * num_gpus  # expect: DDP029
    dataset = TensorDataset(torch.randn(20000, 3, 8, 8), torch.randint(0, 10, (20000,)))
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, batch_size=BATCH_PER_GPU, sampler=sampler)
    model = nn.Sequential(nn.Flatten(), nn.Linear(192, 10))
    model = DDP(model.cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    for epoch in range(30):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.cuda(local_rank), y.cuda(local_rank)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
