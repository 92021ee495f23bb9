"""Twin of the per-tensor conversion: each layer goes to a file of its own, but inside the
training loop, so every epoch rewrites every layer file in place: a crash mid-epoch-save
leaves a truncated layer file where the last good one was."""

import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def save_layer(out_dir, name, tensor):
    torch.save(tensor.detach().cpu(), os.path.join(out_dir, f"{name}.pt"))  # expect-preview: DDP014


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(nn.Sequential(nn.Linear(32, 32), nn.Linear(32, 8)).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(30):
        x = torch.randn(16, 32, device="cuda")
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if dist.get_rank() == 0:
            for name, weight in model.module.state_dict().items():
                save_layer("layers", name, weight)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
