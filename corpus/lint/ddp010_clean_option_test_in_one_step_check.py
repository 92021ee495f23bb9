"""A one-step equivalence check for a tensor-parallel layer: every rank builds the model
from the parsed options, runs one forward and backward, then gathers the gradient shards
only when the layer is split (`args.shards > 1`). The option comes from the launcher's
command line, the same on every rank, so every rank takes the same branch: not a test on
what one rank computed."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


class ColumnParallelLinear(nn.Module):
    def __init__(self, features, outputs, shards):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(outputs // shards, features) * 0.02)

    def forward(self, x):
        return x @ self.weight.t()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--features", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    dist.init_process_group("gloo")
    torch.manual_seed(args.seed)
    layer = ColumnParallelLinear(args.features, 128, args.shards)
    x = torch.randn(8, args.features)
    dist.broadcast(x, src=0)
    out = layer(x)
    loss = out.pow(2).mean()
    loss.backward()
    grad = layer.weight.grad
    if args.shards > 1:
        pieces = [torch.zeros_like(grad) for _ in range(args.shards)]
        dist.all_gather(pieces, grad)
        full = torch.cat(pieces, dim=0)
    else:
        full = grad
    if dist.get_rank() == 0:
        print(f"gradient norm {full.norm().item():.6f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
