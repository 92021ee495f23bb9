"""ImageNet-style script: optimizer and scheduler set up before the DDP wrap.
DDP keeps the module's own parameters, so an optimizer built before the wrap is fine
(pytorch#59147): nothing to report."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=90)
    parser.add_argument("--lr", type=float, default=0.1)
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")

    model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 16 * 16, 10)).cuda(local_rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=30, gamma=0.1)
    model = DDP(model, device_ids=[local_rank])

    data = TensorDataset(torch.randn(640, 3, 16, 16), torch.randint(0, 10, (640,)))
    sampler = DistributedSampler(data, drop_last=True)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        scheduler.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
