"""SLURM launch (srun, one task per GPU): the GPU index is the global rank modulo the
number of GPUs per node."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def init_slurm():
    rank = int(os.environ["SLURM_PROCID"])
    world_size = int(os.environ["SLURM_NTASKS"])
    gpu = rank % torch.cuda.device_count()
    torch.cuda.set_device(gpu)
    dist.init_process_group("nccl", init_method="env://", rank=rank, world_size=world_size)
    return rank, gpu


def main():
    rank, gpu = init_slurm()
    model = DDP(nn.Linear(64, 4).cuda(gpu), device_ids=[gpu])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    data = TensorDataset(torch.randn(4096, 64), torch.randint(0, 4, (4096,)))
    sampler = DistributedSampler(data, rank=rank, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=64, sampler=sampler, num_workers=2)
    for epoch in range(4):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.cuda(gpu, non_blocking=True), y.cuda(gpu, non_blocking=True)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if rank == 0:
            print("epoch", epoch, "done")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
