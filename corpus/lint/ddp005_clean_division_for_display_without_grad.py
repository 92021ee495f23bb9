"""Depth-estimation trainer that reports the mean loss over ranks: the loss is reduced to
rank 0 and divided by the world size under `torch.no_grad()`, in place, for the log.
`backward()` starts from a gradient of 1 whatever the loss's value, so no gradient is
scaled: DDP's own averaging is left as it is."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def optimise(loss, optimizer, world_size, rank):
    optimizer.zero_grad()
    with torch.no_grad():
        dist.reduce(loss, dst=0)
        if rank == 0:
            loss /= world_size
    loss.backward()
    optimizer.step()


def main(model, loader, epochs=20):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    model = DDP(model.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    for epoch in range(epochs):
        loader.sampler.set_epoch(epoch)
        for images, depth in loader:
            prediction = model(images.cuda())
            loss = torch.nn.functional.l1_loss(prediction, depth.cuda())
            optimise(loss, optimizer, world_size, rank)
        if rank == 0:
            print(f"epoch {epoch}: last loss {loss.item():.4f}")
