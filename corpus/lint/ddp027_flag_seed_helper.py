"""Data module with a helper that derives the worker seed from LOCAL_RANK; the training
loader reuses it for its DistributedSampler."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

BASE_SEED = 1234


def process_seed(base):
    return base + 17 * int(os.environ.get("LOCAL_RANK", 0))


def build_train_loader(dataset, batch_size):
    seed = process_seed(BASE_SEED)
    g = torch.Generator()
    g.manual_seed(seed)
    sampler = DistributedSampler(dataset, seed=seed, drop_last=True)  # expect: DDP027
    loader = DataLoader(dataset, batch_size=batch_size, sampler=sampler, generator=g)
    return loader, sampler


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    dataset = TensorDataset(torch.randn(4096, 32), torch.randn(4096, 1))
    loader, sampler = build_train_loader(dataset, 32)
    model = DDP(nn.Linear(32, 1).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(20):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.cuda(local_rank), y.cuda(local_rank)
            loss = nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
