"""The same fitting script turned around: its entry asserts `args.distributed`, so every
rank of the job runs `fit_scales` and saves the same file."""

import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def build_model(args):
    model = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
    if args.distributed:
        dist.init_process_group("nccl")
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
        model = DDP(model.cuda())
    return model


def fit_scales(args):
    model = build_model(args)
    scales = {}
    with torch.no_grad():
        for name, module in model.named_modules():
            if isinstance(module, torch.nn.Linear):
                scales[name] = module.weight.std().item()
    torch.save(scales, args.out)  # expect: DDP013


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--distributed", action="store_true")
    parser.add_argument("--out", default="scales.pt")
    args = parser.parse_args()
    assert args.distributed, "run this under torchrun"
    fit_scales(args)
