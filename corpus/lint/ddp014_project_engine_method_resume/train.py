"""Resumes from `checkpoint.pth`, which `Engine.save_resume_point` rewrites in place every
epoch through the engine's private writer; the per-iteration snapshots are fresh files."""

import os

import torch
import torch.distributed as dist
import torch.nn as nn
from engine import Engine
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main(output_dir, epochs=100):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    dataset = TensorDataset(torch.randn(2048, 16), torch.randint(0, 4, (2048,)))
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, batch_size=32, sampler=sampler)
    model = DDP(nn.Linear(16, 4).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    engine = Engine(local_rank, model, optimizer)
    resume_file = os.path.join(output_dir, "checkpoint.pth")
    if os.path.exists(resume_file):
        engine.load_checkpoint(resume_file)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            engine.iteration += 1
        engine.save_resume_point(output_dir)  # expect: DDP014
        if epoch % 10 == 0:
            engine.save_snapshot(output_dir)
    dist.destroy_process_group()


if __name__ == "__main__":
    main("outputs")
