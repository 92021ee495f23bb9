"""Entry point: parses the options and hands them to the model builder of the project,
which applies the sync-BN switch."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from model import build_model
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--sync-bn", action="store_true")
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(build_model(args).cuda(local_rank), device_ids=[local_rank])
    data = TensorDataset(torch.randn(2400, 3, 16, 16), torch.randint(0, 10, (2400,)))
    sampler = DistributedSampler(data, drop_last=True)
    loader = DataLoader(data, batch_size=24, sampler=sampler)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for epoch in range(args.epochs):
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
