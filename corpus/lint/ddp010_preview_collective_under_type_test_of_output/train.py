"""A masked-autoencoder step whose model returns an extra loss term as a tensor when a
density head is configured and as the float 0.0 otherwise. The all-reduce of that term sits
under `torch.is_tensor(loss_density)`: which kind of value the model returns is fixed by its
configuration, alike on every rank, unless the data decides it, which is not in sight: the
finding is shown by --preview only."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from models import VoxelMAE


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    world_size = dist.get_world_size()
    grids = TensorDataset(torch.randn(4096, 64))
    sampler = DistributedSampler(grids, shuffle=True, drop_last=True)
    loader = DataLoader(grids, batch_size=32, sampler=sampler)
    model = DDP(VoxelMAE().cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for epoch in range(50):
        sampler.set_epoch(epoch)
        for (x,) in loader:
            loss_rgb, loss_density = model(x.cuda(local_rank))
            loss = loss_rgb + loss_density
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            dist.all_reduce(loss_rgb)
            loss_rgb /= world_size
            if torch.is_tensor(loss_density):
                dist.all_reduce(loss_density)  # expect-preview: DDP010
                loss_density /= world_size
            if dist.get_rank() == 0:
                print(f"epoch {epoch}: rgb {loss_rgb.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
