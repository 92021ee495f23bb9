"""Handlers for errors other than OOM, and an OOM handler that tears the job down."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def load_resume(path, device):
    try:
        return torch.load(path, map_location=device)
    except (FileNotFoundError, RuntimeError) as err:
        print(f"no usable checkpoint at {path}: {err}")
        return None


def run_epoch(model, loader, optimizer, device):
    for x, y in loader:
        try:
            loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
            loss.backward()
        except torch.cuda.OutOfMemoryError:
            print(f"rank {dist.get_rank()}: out of memory, aborting the job", flush=True)
            os._exit(1)
        optimizer.step()
        optimizer.zero_grad()


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    dist.init_process_group("nccl")
    blob = torch.load("train.pt")
    dataset = TensorDataset(blob["x"], blob["y"])
    model = DDP(nn.Linear(128, 16).to(device), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    state = load_resume("ckpt/last.pt", device)
    if state is not None:
        model.module.load_state_dict(state["model"])
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, batch_size=64, sampler=sampler)
    for epoch in range(6):
        sampler.set_epoch(epoch)
        run_epoch(model, loader, optimizer, device)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
