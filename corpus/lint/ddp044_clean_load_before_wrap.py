"""Resume done right for the weights: rank 0 loads them before the wrap (DDP's
constructor broadcasts rank 0's parameters and buffers), and every rank restores the
optimizer from the same file."""

import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--resume", default="")
    args = parser.parse_args()
    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    net = nn.Linear(30, 3).cuda()
    if dist.get_rank() == 0 and args.resume:
        net.load_state_dict(torch.load(args.resume, map_location="cpu")["model"])
    model = DDP(net, device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    if args.resume:
        optimizer.load_state_dict(torch.load(args.resume, map_location="cpu")["optimizer"])
    for _ in range(100):
        loss = model(torch.randn(8, 30, device="cuda")).logsumexp(1).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
