"""Wrap first, then the optimizer; the EMA copy is taken before the wrap on purpose."""
import copy
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


@torch.no_grad()
def update_ema(ema, model, decay=0.999):
    for e, p in zip(ema.parameters(), model.parameters()):
        e.mul_(decay).add_(p.detach(), alpha=1 - decay)


def main(epochs=4):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = nn.Sequential(nn.Linear(30, 60), nn.SiLU(), nn.Linear(60, 30)).cuda(local_rank)
    ema = copy.deepcopy(model).requires_grad_(False)
    model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    warmup = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.1, total_iters=100)
    data = TensorDataset(torch.randn(1200, 30))
    sampler = DistributedSampler(data, drop_last=True)
    loader = DataLoader(data, batch_size=40, sampler=sampler)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for (x,) in loader:
            x = x.cuda(local_rank)
            loss = nn.functional.mse_loss(model(x), x)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            warmup.step()
            update_ema(ema, model.module)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
