"""Mixed precision with gradient accumulation; the loss is also scaled by WORLD_SIZE."""
import contextlib
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

WORLD_SIZE = int(os.environ["WORLD_SIZE"])


def main(epochs=3, accum_steps=4):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    data = TensorDataset(torch.randn(2048, 32), torch.randn(2048, 1))
    sampler = DistributedSampler(data, drop_last=True)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    model = DDP(nn.Linear(32, 1).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    scaler = torch.cuda.amp.GradScaler()
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for step, (x, y) in enumerate(loader):
            sync = (step + 1) % accum_steps == 0
            with torch.autocast("cuda", dtype=torch.float16):
                loss = nn.functional.mse_loss(model(x.cuda(local_rank)), y.cuda(local_rank))
            loss = loss / accum_steps
            loss /= WORLD_SIZE  # expect: DDP005
            with contextlib.nullcontext() if sync else model.no_sync():
                scaler.scale(loss).backward()
            if sync:
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad(set_to_none=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
