"""Entry point: `torchrun --nproc_per_node=8 main.py`."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

import engine


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=100)
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    dist.init_process_group("nccl")
    train_set = TensorDataset(torch.randn(6000, 32), torch.randint(0, 10, (6000,)))
    val_set = TensorDataset(torch.randn(1000, 32), torch.randint(0, 10, (1000,)))
    sampler_train = DistributedSampler(train_set, shuffle=True, drop_last=True)
    sampler_val = DistributedSampler(val_set, shuffle=False)  # expect-preview: DDP003
    loader_train = DataLoader(train_set, batch_size=128, sampler=sampler_train, num_workers=8)
    loader_val = DataLoader(val_set, batch_size=256, sampler=sampler_val, num_workers=8)
    model = DDP(nn.Linear(32, 10).to(device), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.05)
    for epoch in range(args.epochs):  # expect: DDP002
        engine.train_one_epoch(model, loader_train, optimizer, device, epoch)
        acc = engine.evaluate(model, loader_val, device)
        if dist.get_rank() == 0:
            print(f"epoch {epoch} acc {acc:.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
