"""Each rank keeps its own RNG/optimizer shard file; the model is written by rank 0 only."""
import os
import random

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def save_rank_state(out_dir, epoch):
    rank = dist.get_rank()
    state = {"torch_rng": torch.get_rng_state(), "py_rng": random.getstate(), "epoch": epoch}
    torch.save(state, os.path.join(out_dir, f"rng_epoch{epoch}_rank{rank}.pt"))


def save_model(model, out_dir, epoch):
    if dist.get_rank() != 0:
        return
    torch.save(model.module.state_dict(), os.path.join(out_dir, f"model_epoch{epoch}.pt"))


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    blob = torch.load("train.pt")
    dataset = TensorDataset(blob["x"], blob["y"])
    model = DDP(nn.Linear(8, 8).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters())
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, batch_size=32, sampler=sampler)
    out_dir = "state"
    os.makedirs(out_dir, exist_ok=True)
    for epoch in range(5):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        save_rank_state(out_dir, epoch)
        save_model(model, out_dir, epoch)
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
