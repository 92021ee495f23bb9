"""FSDP done right: the model is wrapped first and the optimizer is built from the wrapped
model's (sharded) parameters."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 1)).cuda()
    model = FSDP(model, device_id=local_rank, use_orig_params=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for _ in range(10):
        loss = model(torch.randn(64, 256, device="cuda")).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
