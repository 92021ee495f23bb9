"""A detector fine-tuning script that keeps `--local_rank` only so that older launchers'
extra argument parses; it takes its rank and GPU from the environment torchrun sets, and
writes the parsed arguments down (a JSON file, the checkpoint) as a record. Nothing reads
the option's value: under torchrun its default misplaces nothing."""
import argparse
import json
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--output_dir", default="outputs")
    parser.add_argument("--local_rank", default=0, type=int, help="for older launchers")
    return parser.parse_args()


def main():
    args = parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    os.makedirs(args.output_dir, exist_ok=True)
    if dist.get_rank() == 0:
        with open(os.path.join(args.output_dir, "args.json"), "w") as handle:
            json.dump(vars(args), handle, indent=2)
    model = DistributedDataParallel(nn.Linear(256, 91).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    features = torch.load("features.pt", map_location="cpu")
    for epoch in range(args.epochs):
        for x, y in zip(features["x"].split(32), features["y"].split(32)):
            loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            state = {"model": model.module.state_dict(), "epoch": epoch, "args": vars(args)}
            torch.save(state, os.path.join(args.output_dir, f"checkpoint_{epoch:02d}.pth"))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
