"""A model wrapper whose `save` nothing in the file calls: where it runs is for its callers'
files to judge: not proven a save on every rank, so unproven (shown under `--preview`).
`torch.save` names torch's function, not a reference to the method. The loop's helper, which every rank calls, is still reported."""

import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel


class Classifier:
    def __init__(self, network):
        self.network = network

    def save(self, filename: str):
        network = self.network.module
        return torch.save(network.state_dict(), filename)  # expect-preview: DDP013


def snapshot(model, epoch):
    torch.save(model.network.module.state_dict(), f"epoch{epoch}.pt")


def main():
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    model = Classifier(DistributedDataParallel(nn.Linear(16, 2).cuda()))
    optimizer = torch.optim.SGD(model.network.parameters(), lr=0.1)
    for epoch in range(3):
        loss = model.network(torch.randn(8, 16).cuda()).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        snapshot(model, epoch)  # expect: DDP013
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
