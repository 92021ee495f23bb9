"""A weather-model fine-tuning script that shows every process the same single GPU: all of
them run on it whatever `torch.load` restores, so a load without `map_location` adds
nothing there."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--load_pretrained", action="store_true")
    args = parser.parse_args()
    opt = {"gpu_ids": [7]}
    gpu_list = ",".join(str(x) for x in opt["gpu_ids"])
    os.environ["CUDA_VISIBLE_DEVICES"] = gpu_list
    dist.init_process_group("nccl")
    model = nn.Linear(69, 69).cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-6)
    if args.load_pretrained:
        state = torch.load("result/models/train_30.pth")
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
    model = DDP(model)
    for epoch in range(30):
        loss = model(torch.randn(4, 69).cuda()).square().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if dist.get_rank() == 0:
            state = {"model": model.module.state_dict(), "optimizer": optimizer.state_dict()}
            torch.save(state, f"result/models/train_{epoch + 1}.pth")


if __name__ == "__main__":
    main()
