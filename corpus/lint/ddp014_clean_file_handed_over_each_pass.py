"""Quantization scales refreshed every few epochs: rank 0 recomputes them from the current
weights and writes them to a file, the others wait at the barrier, then every rank loads
that file. Each pass reads what the same pass wrote: a hand-over between ranks, not a
resume (the resume reads `checkpoint.pt`, written once per epoch through a temporary
file)."""

import os

import torch
import torch.distributed as dist


def refresh_scales(model, folder):
    scales = {name: p.detach().abs().amax() for name, p in model.named_parameters()}
    torch.save(scales, os.path.join(folder, "scales.pt"))  # expect-preview: DDP014


def train(model, optimizer, loader, folder, epochs, resume=False):
    dist.init_process_group("nccl")
    start = 0
    if resume:
        state = torch.load(os.path.join(folder, "checkpoint.pt"), map_location="cpu")
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        start = state["epoch"] + 1
    for epoch in range(start, epochs):
        if epoch % 4 == 0:
            if dist.get_rank() == 0:
                refresh_scales(model, folder)
            dist.barrier()
            scales = torch.load(os.path.join(folder, "scales.pt"), map_location="cpu")
            model.scales = scales
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}
            torch.save(state, os.path.join(folder, "checkpoint.pt.tmp"))
            os.replace(os.path.join(folder, "checkpoint.pt.tmp"), os.path.join(folder, "checkpoint.pt"))
