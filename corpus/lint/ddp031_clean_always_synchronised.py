"""The model is always converted to SyncBatchNorm; the leftover --sync_bn switch changes
nothing, and nothing needs it to."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sync_bn", action="store_true")
    parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = nn.Sequential(nn.Linear(12, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 2))
    model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    model = DDP(model.cuda(local_rank), device_ids=[local_rank])
    data = TensorDataset(torch.randn(1200, 12), torch.randint(0, 2, (1200,)))
    sampler = DistributedSampler(data, drop_last=True)
    loader = DataLoader(data, batch_size=24, sampler=sampler)
    optimizer = torch.optim.Adam(model.parameters())
    for epoch in range(10):
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
