"""A train_step helper that bails out on loss spikes before backward."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Config:
    max_loss = 50.0
    epochs = 20
    batch_size = 128


def train_step(model, batch, optimizer, device, cfg):
    inputs, targets = (t.to(device, non_blocking=True) for t in batch)
    outputs = model(inputs)
    loss = nn.functional.smooth_l1_loss(outputs, targets)
    if loss.item() > cfg.max_loss:
        print(f"loss spike {loss.item():.1f}, skipping step")
        return None  # expect: DDP011
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.detach()


def main():
    cfg = Config()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    dist.init_process_group("nccl")
    data = torch.load("regression.pt")
    dataset = TensorDataset(data["inputs"], data["targets"])
    net = nn.Sequential(nn.Linear(24, 64), nn.SiLU(), nn.Linear(64, 3)).to(device)
    model = DistributedDataParallel(net, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4)
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, batch_size=cfg.batch_size, sampler=sampler)
    for epoch in range(cfg.epochs):
        sampler.set_epoch(epoch)
        for batch in loader:
            train_step(model, batch, optimizer, device, cfg)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
