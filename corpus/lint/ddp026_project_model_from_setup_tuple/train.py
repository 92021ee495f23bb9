"""Video depth training: the helper hands back the wrapped model inside a tuple, and the
step calls the loss method on the module inside the wrapper, so DDP's forward never runs."""

import os

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

from engine.build import build_run


def main(cfg, dataset):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model, optimizer, scheduler = build_run(cfg, local_rank)
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=cfg["batch"], sampler=sampler)
    for epoch in range(cfg["epochs"]):
        sampler.set_epoch(epoch)
        for image, depth in loader:
            image, depth = image.cuda(local_rank), depth.cuda(local_rank)
            loss = model.module.training_loss(image, depth)  # expect: DDP026
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        scheduler.step()


if __name__ == "__main__":
    main({"lr": 1e-4, "step": 10, "batch": 4, "epochs": 30}, torch.load("frames.pt"))
