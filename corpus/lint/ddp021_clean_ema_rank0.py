"""Keeps an EMA copy of the bare model; rank 0 evaluates the EMA and samples via .module."""
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


@torch.no_grad()
def score(net, batch):
    return net(batch).pow(2).mean().item()


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    rank = dist.get_rank()

    base = nn.Sequential(nn.Linear(64, 256), nn.SiLU(), nn.Linear(256, 64)).cuda(local_rank)
    ema = copy.deepcopy(base).eval().requires_grad_(False)
    model = DDP(base, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-4, weight_decay=0.01)

    data = TensorDataset(torch.randn(16384, 64))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=256, sampler=sampler, num_workers=4)
    probe = torch.randn(32, 64).cuda(local_rank)

    for epoch in range(30):
        sampler.set_epoch(epoch)
        for (x,) in loader:
            x = x.cuda(local_rank, non_blocking=True)
            noise = torch.randn_like(x)
            loss = nn.functional.mse_loss(model(x + noise), x)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            update_ema(ema, model.module)
        if rank == 0:
            print(f"epoch {epoch}: ema {score(ema, probe):.4f} raw {score(model.module, probe):.4f}")
            with torch.no_grad():
                sample = ema(probe)
            tmp = "ema.pt.tmp"
            torch.save({"ema": ema.state_dict(), "sample": sample.cpu()}, tmp)
            os.replace(tmp, "ema.pt")
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
