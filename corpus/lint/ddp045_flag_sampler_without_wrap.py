"""Fine-tuning script launched with torchrun: the data is sharded, the model never wrapped."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def build_model(hidden):
    return nn.Sequential(nn.Linear(128, hidden), nn.GELU(), nn.Linear(hidden, 10))


def train_one_epoch(model, loader, optimizer, device, max_norm):
    model.train()
    for x, y in loader:
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()  # expect: DDP045
        if max_norm > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        optimizer.step()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--hidden", type=int, default=256)
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    torch.manual_seed(1234 + dist.get_rank())
    model = build_model(args.hidden).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    data = TensorDataset(torch.randn(8192, 128), torch.randint(0, 10, (8192,)))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=64, sampler=sampler, num_workers=2)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        train_one_epoch(model, loader, optimizer, device, max_norm=1.0)
        if dist.get_rank() == 0:
            torch.save(model.state_dict(), "finetuned.pt.tmp")
            os.replace("finetuned.pt.tmp", "finetuned.pt")
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
