"""HF-style loop: nullcontext on the last micro-step, no_sync otherwise."""
import contextlib
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main(epochs=2, grad_accum=4):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(nn.Linear(32, 32).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
    data = TensorDataset(torch.randn(1024, 32))
    sampler = DistributedSampler(data, drop_last=True)
    loader = DataLoader(data, batch_size=8, sampler=sampler)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for step, (x,) in enumerate(loader):
            is_update_step = (step + 1) % grad_accum == 0
            sync_context = contextlib.nullcontext() if is_update_step else model.no_sync()
            with sync_context:
                x = x.cuda(local_rank)
                loss = nn.functional.mse_loss(model(x), x) / grad_accum
                loss.backward()
                torch.nn.utils.clip_grad_value_(model.parameters(), 1.0)  # expect: DDP007
            if is_update_step:
                optimizer.step()
                optimizer.zero_grad()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
