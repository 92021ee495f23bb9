"""Trains a sea-ice model with DDP and saves the wrapper's state dict: the keys start with
`module.`. The project's analysis script loads it into `nn.DataParallel`, whose keys carry
the same prefix, so the file round-trips there: whether anything loads it into a bare model
is not known, and the finding is unproven."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main(loader, epochs, out="seaice_unet.pth"):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(nn.Conv2d(4, 1, 3, padding=1).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        loader.sampler.set_epoch(epoch)
        for fields, target in loader:
            loss = nn.functional.mse_loss(model(fields.cuda()), target.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    if dist.get_rank() == 0:
        torch.save(model.state_dict(), out)  # expect-preview: DDP006
