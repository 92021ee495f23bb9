"""Single-node spawn script: the process group itself is built from the local index and
the GPU count, so the sampler matches it."""
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def run(local_rank, epochs):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "12355")
    ngpus = torch.cuda.device_count()
    dist.init_process_group("nccl", rank=local_rank, world_size=ngpus)
    torch.cuda.set_device(local_rank)
    model = DDP(nn.Linear(10, 1).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    data = TensorDataset(torch.randn(2000, 10), torch.randn(2000, 1))
    sampler = DistributedSampler(data, num_replicas=ngpus, rank=local_rank, drop_last=True)
    loader = DataLoader(data, batch_size=50, sampler=sampler)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(run, args=(3,), nprocs=torch.cuda.device_count())
