"""After training, every rank reloads the best weights and logs the epoch they came from:
an evaluation, not a resume."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler


def run(net, train_set, val_set, out_dir, epochs=30):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(net.cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    sampler = DistributedSampler(train_set, drop_last=True)
    loader = DataLoader(train_set, batch_size=32, sampler=sampler)
    best_loss = float("inf")
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        val = evaluate(model.module, val_set, local_rank)
        if val < best_loss and dist.get_rank() == 0:
            best_loss = val
            path = os.path.join(out_dir, f"best_{epoch:03d}.pth")
            torch.save({"model": model.module.state_dict(), "epoch": epoch}, path)
    dist.barrier()
    best = torch.load(os.path.join(out_dir, "best_final.pth"), map_location="cpu")
    model.module.load_state_dict(best["model"])
    print(f"best weights from epoch {best['epoch']}")
    return model.module


@torch.no_grad()
def evaluate(net, dataset, local_rank):
    total = 0.0
    for x, y in DataLoader(dataset, batch_size=64):
        total += nn.functional.mse_loss(net(x.cuda(local_rank)), y.cuda(local_rank)).item()
    return total
