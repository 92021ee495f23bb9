"""Certified-robustness training of a Lipschitz-bounded network.

Each step asks the inner module for its current Lipschitz bound (a method of the module,
computed from the weights) and hands it, with the DDP model itself, to the margin loss
the config names. The loss function runs the DDP model's forward, so the reducer is
armed; the bound only adds a second path to the same parameters, whose summed gradient
DDP all-reduces once in backward().
"""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class BoundedNet(nn.Module):
    def __init__(self, width=256, classes=10):
        super().__init__()
        self.body = nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, width), nn.ReLU())
        self.head = nn.Linear(width, classes)

    def lipschitz_bound(self):
        bound = torch.ones((), device=self.head.weight.device)
        for layer in (self.body[1], self.head):
            bound = bound * torch.linalg.matrix_norm(layer.weight, ord=2)
        return bound

    def forward(self, x):
        return self.head(self.body(x))


def margin_loss(model, x, label, bound, eps):
    logits = model(x)
    worst = logits + eps * bound
    worst = worst.scatter(1, label.view(-1, 1), logits.gather(1, label.view(-1, 1)))
    return F.cross_entropy(worst, label)


def hinge_loss(model, x, label, bound, eps):
    logits = model(x)
    target = logits.gather(1, label.view(-1, 1))
    return F.relu(1.0 + logits + eps * bound - target).mean()


LOSSES = {"margin": margin_loss, "hinge": hinge_loss}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--loss", default="margin", choices=sorted(LOSSES))
    parser.add_argument("--eps", type=float, default=36 / 255)
    parser.add_argument("--epochs", type=int, default=5)
    args = parser.parse_args()

    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")

    model = DDP(BoundedNet().cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    data = TensorDataset(torch.rand(4096, 3, 32, 32), torch.randint(0, 10, (4096,)))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=128, sampler=sampler, num_workers=2)
    loss_fn = LOSSES[args.loss]

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        for images, labels in loader:
            images, labels = images.cuda(non_blocking=True), labels.cuda(non_blocking=True)
            bound = model.module.lipschitz_bound()
            loss = loss_fn(model, images, labels, bound, args.eps)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
