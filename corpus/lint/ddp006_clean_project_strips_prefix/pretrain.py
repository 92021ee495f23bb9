"""Saves the wrapper's state dict as is: every loader of the project goes through
`checkpointing.load_weights`, which drops the `module.` prefix, so the keys round-trip."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

import checkpointing


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    backbone = nn.Sequential(nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 8)).cuda()
    checkpointing.load_weights(backbone, os.environ.get("INIT_WEIGHTS"))
    model = DDP(backbone, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for step in range(100):
        loss = model(torch.randn(16, 32).cuda()).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 50 == 0 and dist.get_rank() == 0:
            state = {"model": model.state_dict(), "step": step}
            torch.save(state, f"pretrain_{step:05d}.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
