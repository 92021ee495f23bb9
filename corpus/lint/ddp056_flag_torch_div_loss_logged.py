"""The logged training loss is averaged over the ranks with an out-of-place `torch.div`
whose result is dropped: the log shows the sum, N times the loss, on any job of N
processes. `torchrun --nproc_per_node=8 train_lm.py`."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    world_size = dist.get_world_size()
    model = DDP(nn.Linear(512, 512).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    for step in range(10_000):
        x = torch.randn(16, 512, device="cuda")
        loss = (model(x) - x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 50 == 0:
            reduced = loss.detach().clone()
            dist.all_reduce(reduced)
            torch.div(reduced, world_size)  # expect: DDP056
            if dist.get_rank() == 0:
                print(f"step {step} loss {reduced.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
