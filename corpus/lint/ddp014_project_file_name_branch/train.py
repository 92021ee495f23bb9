"""Depth pretraining: every ten epochs a numbered snapshot (a file of its own, named by the
call), and after each test the resume file the manager names itself, rewritten in place."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from checkpointing import CheckpointManager


def main(out="checkpoints", epochs=100):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(nn.Linear(32, 16).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.03)
    manager = CheckpointManager(out)
    start = manager.resume(model, optimizer)
    data = TensorDataset(torch.randn(256, 32))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    for epoch in range(start, epochs):
        if dist.get_rank() == 0 and epoch % 10 == 0:
            manager.save(epoch, model, optimizer, filename="checkpoint-ep{}.pth.tar".format(epoch))
        sampler.set_epoch(epoch)
        for (x,) in loader:
            loss = model(x.cuda()).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            manager.save(epoch + 1, model, optimizer)  # expect: DDP014


if __name__ == "__main__":
    main()
