"""The phases are swapped: the training pass unwraps the DDP model, so its backward
all-reduces nothing and the replicas drift apart."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def run_epoch(model, optimizer, phase, loader):
    net = model
    if phase == "train":
        net = model.module
        net.train()
    else:
        net.eval()
    for x, y in loader:
        loss = nn.functional.mse_loss(net(x.cuda()), y.cuda())  # expect: DDP026
        if phase == "train":
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


def main():
    dist.init_process_group("nccl")
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    model = DDP(nn.Linear(16, 1).cuda(), device_ids=[rank])
    optimizer = torch.optim.Adam(model.parameters())
    data = [(torch.randn(4, 16), torch.randn(4, 1)) for _ in range(8)]
    run_epoch(model, optimizer, "train", data)


if __name__ == "__main__":
    main()
