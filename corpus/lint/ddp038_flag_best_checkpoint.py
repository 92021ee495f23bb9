"""Validation over a sharded dev set picks the best checkpoint and drives the plateau
scheduler, but the loss is never combined across ranks."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


@torch.no_grad()
def validate(model, loader, device):
    model.eval()
    running = 0.0
    for x, y in loader:
        running += nn.functional.mse_loss(model(x.to(device)), y.to(device)).item()
    return running / len(loader)


def main(epochs=40):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    train_set = TensorDataset(torch.randn(6000, 24), torch.randn(6000, 1))
    dev_set = TensorDataset(torch.randn(1200, 24), torch.randn(1200, 1))
    sampler = DistributedSampler(train_set, drop_last=True)
    train_loader = DataLoader(train_set, batch_size=64, sampler=sampler)
    dev_loader = DataLoader(dev_set, batch_size=64, sampler=DistributedSampler(dev_set, shuffle=False))
    model = DDP(nn.Linear(24, 1).to(device), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, patience=3)
    best = float("inf")
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        model.train()
        for x, y in train_loader:
            loss = nn.functional.mse_loss(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        dev_loss = validate(model, dev_loader, device)
        plateau.step(dev_loss)  # expect: DDP038
        if dist.get_rank() == 0 and dev_loss < best:  # expect: DDP038
            best = dev_loss
            torch.save(model.module.state_dict(), "best.tmp")
            os.replace("best.tmp", "best.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
