"""Different loaders for single-GPU debugging and for torchrun."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def make_loader(dataset, batch_size, distributed):
    if distributed:
        sampler = DistributedSampler(dataset, shuffle=True, drop_last=True)
        loader = DataLoader(dataset, batch_size=batch_size, sampler=sampler, num_workers=2)
    else:
        sampler = None
        loader = DataLoader(dataset, batch_size=batch_size, shuffle=True, sampler=None)
    return loader, sampler


def main():
    distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local_rank)
    if distributed:
        dist.init_process_group("nccl")
    blob = torch.load("toy.pt")
    dataset = TensorDataset(blob["x"], blob["y"])
    model = nn.Linear(8, 1).cuda(local_rank)
    if distributed:
        model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters())
    loader, sampler = make_loader(dataset, 16, distributed)
    for epoch in range(4):
        if sampler is not None:
            sampler.set_epoch(epoch)
        for x, y in loader:
            pred = model(x.cuda(local_rank))
            loss = nn.functional.mse_loss(pred, y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
