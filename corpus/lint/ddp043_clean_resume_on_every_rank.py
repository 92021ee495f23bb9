"""Resume done right: every rank reads the checkpoint (mapped to the CPU) and so every rank
starts at the same epoch; the weights are loaded before the wrap."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--resume", default="")
    args = parser.parse_args()
    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    net = nn.Linear(12, 4).cuda()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    start_epoch = 0
    if args.resume:
        checkpoint = torch.load(args.resume, map_location="cpu")
        net.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        start_epoch = checkpoint["epoch"] + 1
    if dist.get_rank() == 0:
        print(f"starting at epoch {start_epoch}")
    model = DDP(net, device_ids=[local_rank])
    data = TensorDataset(torch.randn(240, 12), torch.randint(0, 4, (240,)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=12, sampler=sampler)
    for epoch in range(start_epoch, args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
