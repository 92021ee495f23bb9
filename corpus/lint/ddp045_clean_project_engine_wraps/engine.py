"""The training loop of the project: it wraps the model it is given in DDP itself."""
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP


def train(model, train_loader, val_loader, optimizer, scheduler, device, epochs, out_dir):
    model = DDP(model, device_ids=[device.index])
    best = float("inf")
    for epoch in range(1, epochs + 1):
        train_loader.sampler.set_epoch(epoch)
        model.train()
        for x, y in train_loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            loss = F.mse_loss(model(x), y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
        scheduler.step()
        model.eval()
        with torch.no_grad():
            val = sum(F.mse_loss(model.module(x.to(device)), y.to(device)).item() for x, y in val_loader)
        if dist.get_rank() == 0 and val < best:
            best = val
            tmp = os.path.join(out_dir, "best.pt.tmp")
            torch.save(model.module.state_dict(), tmp)
            os.replace(tmp, os.path.join(out_dir, "best.pt"))
    return model.module
