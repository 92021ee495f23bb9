"""An equivalence check with two modes chosen on the command line: `--mode single` runs
the reference on one GPU as a plain process (`python check_equivalence.py --mode
single`), `--mode dist` runs the sharded model under torchrun and compares. The
reference's `cuda:0` belongs to a one-process run."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def build(seed):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(256, 256), nn.Tanh(), nn.Linear(256, 8))


def reference_run(args):
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    model = build(args.seed).to(device)
    inputs = torch.randn(args.batch, 256, device=device)
    out = model(inputs)
    out.mean().backward()
    torch.save({"inputs": inputs.cpu(), "out": out.detach().cpu()}, args.reference)


def sharded_run(args):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(build(args.seed).cuda(), device_ids=[local_rank])
    saved = torch.load(args.reference, map_location="cpu")
    out = model(saved["inputs"].cuda())
    if dist.get_rank() == 0:
        diff = (out.detach().cpu() - saved["out"]).abs().max().item()
        print(f"max difference {diff:.3e}")
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=["single", "dist"], required=True)
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--reference", default="reference.pt")
    args = parser.parse_args()
    if args.mode == "single":
        reference_run(args)
    elif args.mode == "dist":
        sharded_run(args)
