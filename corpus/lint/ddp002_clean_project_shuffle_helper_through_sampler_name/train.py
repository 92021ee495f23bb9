"""Training loop that calls the project's shuffle hook at the top of every epoch: the hook
reads the loader's sampler into a name of its own and sets its epoch there."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from data import build_loader, shuffle_loader


def train(model, dataset, epochs=60):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(model.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    loader = build_loader(dataset, batch_size=16)
    for epoch in range(epochs):
        shuffle_loader(loader, epoch)
        for composite, mask, real in loader:
            output = model(composite.cuda(), mask.cuda())
            loss = torch.nn.functional.l1_loss(output, real.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            print(f"epoch {epoch} l1 {loss.item():.4f}")
