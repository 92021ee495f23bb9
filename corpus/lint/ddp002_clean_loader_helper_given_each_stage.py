"""Curriculum training: each epoch builds its loader through a helper from that epoch's
own stage of the data, and sets the new sampler's epoch once it is built."""
import os

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def build_loader(dataset, batch_size):
    sampler = DistributedSampler(dataset, drop_last=True)
    return DataLoader(dataset, batch_size=batch_size, sampler=sampler)


def main(stages, epochs_per_stage=2):
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    dist.init_process_group("nccl")
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(16, 1).cuda())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for stage, (x, y) in enumerate(stages):
        loader = build_loader(TensorDataset(x, y), 64)
        for epoch in range(epochs_per_stage):
            loader.sampler.set_epoch(epoch)
            for inputs, targets in loader:
                loss = torch.nn.functional.mse_loss(model(inputs.cuda()), targets.cuda())
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
    for epoch in range(3):
        loader = build_loader(TensorDataset(*stages[epoch % len(stages)]), 64)
        for inputs, targets in loader:
            loss = torch.nn.functional.mse_loss(model(inputs.cuda()), targets.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
