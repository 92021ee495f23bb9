"""A trainer called from two places with its options object: once for a plain run and
once per generation of a hyper-parameter search. Whatever each call passes, the path is
read from a field of the options (`opt.save_dir`), and every epoch rewrites `last.pt`."""
import argparse
import os
from pathlib import Path

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel


def train(hyp, opt):
    weights = Path(opt.save_dir) / "weights"
    weights.mkdir(parents=True, exist_ok=True)
    last = weights / "last.pt"
    local_rank = int(os.environ["LOCAL_RANK"])
    net = DistributedDataParallel(nn.Linear(8, 2).cuda(local_rank), device_ids=[local_rank])
    opt_ = torch.optim.SGD(net.parameters(), lr=hyp["lr"])
    for epoch in range(opt.epochs):
        loss = net(torch.randn(4, 8, device=local_rank)).sum()
        opt_.zero_grad()
        loss.backward()
        opt_.step()
        if dist.get_rank() == 0:
            torch.save({"epoch": epoch, "model": net.module.state_dict()}, last)  # expect-preview: DDP014


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--save-dir", default="runs/exp")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--evolve", type=int, default=0)
    opt = parser.parse_args()
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    dist.init_process_group("nccl")
    if not opt.evolve:
        train({"lr": 0.01}, opt)
    else:
        for generation in range(opt.evolve):
            train({"lr": 0.01 * (generation + 1)}, opt)


if __name__ == "__main__":
    main()
