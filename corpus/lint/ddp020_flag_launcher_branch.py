"""Two launchers: the SLURM branch picks the GPU, the torchrun branch forgets to."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def init_distributed():
    if "SLURM_PROCID" in os.environ:
        local_rank = int(os.environ["SLURM_LOCALID"])
        torch.cuda.set_device(local_rank)
        dist.init_process_group("nccl", rank=int(os.environ["SLURM_PROCID"]), world_size=int(os.environ["SLURM_NTASKS"]))
    else:
        dist.init_process_group("nccl")


def main(epochs=8):
    init_distributed()
    model = nn.Sequential(nn.Linear(24, 48), nn.ReLU(), nn.Linear(48, 2)).cuda()  # expect: DDP020
    model = DDP(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    data = TensorDataset(torch.randn(3000, 24), torch.randint(0, 2, (3000,)))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=50, sampler=sampler, num_workers=2)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)  # expect: DDP020, DDP020
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
