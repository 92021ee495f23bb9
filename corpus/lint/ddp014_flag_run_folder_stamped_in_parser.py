"""Point-cloud classifier: the run folder is stamped once by the option parser, and the
resume file `current.pth` inside it is rewritten every epoch by a helper."""
import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def parse_options():
    parser = argparse.ArgumentParser()
    parser.add_argument("--log_root", default="runs")
    parser.add_argument("--epochs", type=int, default=200)
    parser.add_argument("--resume", default="")
    config = parser.parse_args()
    config.log_dir = os.path.join(config.log_root, f"pointnet_{int(time.time())}")
    os.makedirs(config.log_dir, exist_ok=True)
    return config


def save_state(config, epoch, model, optimizer):
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}
    torch.save(state, os.path.join(config.log_dir, "current.pth"))  # expect: DDP014


def main(config):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(nn.Linear(3, 40).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    start = 0
    if config.resume:
        state = torch.load(config.resume, map_location="cpu")
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        start = state["epoch"] + 1
    data = TensorDataset(torch.randn(512, 3), torch.randint(0, 40, (512,)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    for epoch in range(start, config.epochs):
        sampler.set_epoch(epoch)
        for points, label in loader:
            loss = nn.functional.cross_entropy(model(points.cuda()), label.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            save_state(config, epoch, model, optimizer)


if __name__ == "__main__":
    main(parse_options())
