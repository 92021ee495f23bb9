"""The device comes from the options module's `--local_rank`: under torchrun it stays 0 in
every process (the module copies it into LOCAL_RANK only where that is unset)."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from pretrain_options import get_args


def main():
    args = get_args()
    distributed = args.launcher != "none"
    if distributed:
        torch.cuda.set_device(args.local_rank)
        dist.init_process_group("nccl")
    torch.manual_seed(args.seed + dist.get_rank() if distributed else args.seed)
    model = nn.Linear(32, 8).cuda()
    if distributed:
        model = DDP(model, device_ids=[args.local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    data = TensorDataset(torch.randn(1024, 32), torch.randn(1024, 8))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True) if distributed else None
    loader = DataLoader(data, batch_size=32, sampler=sampler, shuffle=sampler is None)
    for epoch in range(10):
        if sampler is not None:
            sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    if not distributed or dist.get_rank() == 0:
        state = model.module.state_dict() if distributed else model.state_dict()
        torch.save(state, "last.pt.tmp")
        os.replace("last.pt.tmp", "last.pt")


if __name__ == "__main__":
    main()
