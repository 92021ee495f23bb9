"""Recurrent flow estimation: every training forward calls methods of the module inside
the DDP wrapper (`encode`, `refine`) and collects the per-frame predictions in a list that
is stacked into the loss. The wrapper's forward never runs, so its gradient all-reduce is
never prepared: each rank trains its own replica. Freezing the context encoder after the
wrap is then no reduction error (the reducer waits for nothing), only unproven."""

import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


class FlowNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.context = nn.Conv2d(6, 64, 3, padding=1)
        self.update = nn.Conv2d(64, 2, 3, padding=1)

    def encode(self, frames):
        return self.context(frames)

    def refine(self, features):
        return self.update(features)


def main(loader, iterations, freeze_context):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(FlowNet().cuda(), device_ids=[local_rank])
    if freeze_context:
        for p in model.module.context.parameters():
            p.requires_grad = False  # expect-preview: DDP046
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-4)
    for frames, flows in loader:
        predictions = []
        features = model.module.encode(frames.cuda())  # expect: DDP026
        for _ in range(iterations):
            predictions.append(model.module.refine(features))  # expect: DDP026
        loss = (torch.stack(predictions, dim=0) - flows.cuda()).abs().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
