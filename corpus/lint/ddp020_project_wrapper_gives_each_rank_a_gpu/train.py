"""Graph network training on an HPC system: `submit.sh` starts every rank through
`gpu_affinity.sh`, which shows each process one GPU, so `.cuda()` is each rank's own GPU
there; launched another way (plain torchrun) every rank would share GPU 0."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    dist.init_process_group("nccl", rank=int(os.environ["PMI_RANK"]), world_size=int(os.environ["PMI_SIZE"]))
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64)).cuda()  # expect-preview: DDP020
    model = DDP(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(1000):
        x = torch.randn(32, 64).cuda()  # expect-preview: DDP020
        loss = (model(x) - x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
