"""GAN training toggles the whole discriminator's gradients off for the generator step:
with every parameter of the wrapped model frozen, no gradient hook fires and DDP expects
no reduction for it."""

import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    net_g = DDP(nn.Linear(16, 32).cuda(local_rank), device_ids=[local_rank])
    net_d = DDP(nn.Linear(32, 1).cuda(local_rank), device_ids=[local_rank])
    opt_g = torch.optim.Adam(net_g.parameters(), lr=2e-4)
    opt_d = torch.optim.Adam(net_d.parameters(), lr=2e-4)
    for _ in range(1000):
        real = torch.randn(64, 32, device="cuda")
        for p in net_d.parameters():
            p.requires_grad = True
        fake = net_g(torch.randn(64, 16, device="cuda")).detach()
        loss_d = (
            nn.functional.softplus(net_d(fake)).mean() + nn.functional.softplus(-net_d(real)).mean()
        )
        opt_d.zero_grad()
        loss_d.backward()
        opt_d.step()
        for p in net_d.parameters():
            p.requires_grad = False
        loss_g = nn.functional.softplus(-net_d(net_g(torch.randn(64, 16, device="cuda")))).mean()
        opt_g.zero_grad()
        loss_g.backward()
        opt_g.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
