"""FSDP2 per-layer sharding: the optimizer is built, then each layer and the root are
passed to `fully_shard`, which replaces every parameter with a DTensor; the optimizer keeps
the replaced tensors."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.fsdp import fully_shard


def build_model(depth, width):
    layers = [nn.Sequential(nn.Linear(width, width), nn.ReLU()) for _ in range(depth)]
    return nn.Sequential(*layers, nn.Linear(width, 10))


def train(steps):
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    dist.init_process_group("nccl")
    model = build_model(8, 1024).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)  # expect: DDP004
    for layer in model:
        fully_shard(layer)
    fully_shard(model)
    for _ in range(steps):
        x = torch.randn(32, 1024, device="cuda")
        y = torch.randint(0, 10, (32,), device="cuda")
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    train(500)
