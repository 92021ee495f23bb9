"""Entry point: reads its options from options.py and never looks at the sync-BN switch."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from options import parse_options
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    opt = parse_options()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    data = TensorDataset(torch.randn(2000, 30), torch.randint(0, 3, (2000,)))
    sampler = DistributedSampler(data, drop_last=True)
    loader = DataLoader(data, batch_size=40, sampler=sampler)
    net = nn.Sequential(nn.Linear(30, 30), nn.BatchNorm1d(30), nn.ReLU(), nn.Linear(30, 3))
    model = DDP(net.cuda(local_rank), device_ids=[local_rank])  # expect: DDP017
    optimizer = torch.optim.SGD(model.parameters(), lr=opt.lr)
    for epoch in range(opt.epochs):
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
