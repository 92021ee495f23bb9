"""An `mp.spawn` launcher that clears the previous run's folder once, in the parent, before
it starts the workers; each worker deletes only its own per-rank lock file."""

import os
import shutil

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def worker(rank, world_size, out):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29542")
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    torch.cuda.set_device(rank)
    lock = os.path.join(out, f"worker{rank}.lock")
    if os.path.exists(lock):
        os.remove(lock)
    model = DDP(torch.nn.Linear(16, 8).cuda(rank), device_ids=[rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = TensorDataset(torch.randn(1024, 16))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=64, sampler=sampler)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for (x,) in loader:
            loss = model(x.cuda(rank)).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


def launch(out):
    if os.path.isdir(os.path.join(out, "samples")):
        shutil.rmtree(os.path.join(out, "samples"))
    n = torch.cuda.device_count()
    mp.spawn(worker, args=(n, out), nprocs=n)


if __name__ == "__main__":
    launch("runs")
