"""A mode switch whose one-GPU helper is also called by the distributed mode: under
torchrun every rank runs `evaluate_on_gpu`, whose `cuda:0` puts every rank's copy on the
first GPU."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn


def evaluate_on_gpu(model, batch):
    device = torch.device("cuda:0")  # expect: DDP001
    model = model.to(device)
    with torch.no_grad():
        return model(batch.to(device)).argmax(1)


def distributed(args):
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    model = nn.Linear(32, 4)
    print(evaluate_on_gpu(model, torch.randn(16, 32)))
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="dist")
    args = parser.parse_args()
    if args.mode == "single":
        evaluate_on_gpu(nn.Linear(32, 4), torch.randn(16, 32))
    elif args.mode == "dist":
        distributed(args)
