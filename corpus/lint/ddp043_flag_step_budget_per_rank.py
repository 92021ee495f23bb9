"""A step-based language-model trainer (`torchrun --nproc_per_node=4 pretrain.py`): the
main process adds the warm-up steps to its own budget only, so the ranks stop after
different step counts."""

import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    dist.init_process_group(backend="nccl")
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(nn.Linear(64, 64).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4)
    total_steps = 10_000
    warmup_steps = 500
    if rank == 0:
        total_steps = total_steps + warmup_steps
        print(f"training for {total_steps} steps")
    for step in range(total_steps):  # expect: DDP043
        batch = torch.randn(8, 64, device="cuda")
        loss = model(batch).pow(2).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)


if __name__ == "__main__":
    main()
