"""A save helper that returns early on the other ranks, then waits at a barrier only rank 0
reaches."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def save_checkpoint(model, epoch, path):
    if dist.get_rank() != 0:
        return
    tmp = f"{path}.tmp"
    torch.save({"model": model.module.state_dict(), "epoch": epoch}, tmp)
    os.replace(tmp, path)
    dist.barrier()  # expect: DDP010


def main(epochs=3):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    data = TensorDataset(torch.randn(1024, 8), torch.randint(0, 3, (1024,)))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=16, sampler=sampler, num_workers=2)
    model = DDP(nn.Linear(8, 3).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.cuda(local_rank, non_blocking=True), y.cuda(local_rank, non_blocking=True)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        save_checkpoint(model, epoch, "last.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
