"""Resumable training: every device string is built from LOCAL_RANK."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def load_weights(model, path, local_rank):
    # Checkpoints were written from GPU 0: remap them onto this process's GPU.
    state = torch.load(path, map_location={"cuda:0": f"cuda:{local_rank}"})
    model.load_state_dict(state["model"])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--resume", default="")
    parser.add_argument("--epochs", type=int, default=4)
    args = parser.parse_args()

    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device(f"cuda:{local_rank}")
    torch.cuda.set_device(device)
    dist.init_process_group("nccl")

    model = nn.Sequential(nn.Linear(20, 40), nn.Tanh(), nn.Linear(40, 2)).to(device)
    if args.resume:
        load_weights(model, args.resume, local_rank)
    model = DDP(model, device_ids=[local_rank], output_device=local_rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    data = TensorDataset(torch.randn(1000, 20), torch.randint(0, 2, (1000,)))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=50, sampler=sampler)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        correct = torch.zeros(1, device=device)
        dist.all_reduce(correct)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
