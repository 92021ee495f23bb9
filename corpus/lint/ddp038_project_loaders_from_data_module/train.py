"""The autoencoder's trainer: the validation loss is averaged over this rank's shard of the
validation set (the data module shards it) and never reduced, and rank 0 keeps the "best"
weights by its own shard's loss."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from data import build_loaders


def main():
    dist.init_process_group("nccl")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    train_loader, val_loader = build_loaders("data", 4, rank=rank, world_size=world_size)
    net = nn.Sequential(nn.Linear(4096, 256), nn.ReLU(), nn.Linear(256, 4096)).cuda()
    model = DistributedDataParallel(net, device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    best = float("inf")
    for epoch in range(200):
        train_loader.sampler.set_epoch(epoch)
        model.train()
        for (volume,) in train_loader:
            volume = volume.cuda()
            loss = nn.functional.l1_loss(model(volume), volume)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        model.eval()
        val_loss = 0.0
        for step, (volume,) in enumerate(val_loader):
            volume = volume.cuda()
            with torch.no_grad():
                val_loss += nn.functional.l1_loss(model(volume), volume).item()
        val_loss = val_loss / (step + 1)
        if rank == 0:
            print(f"epoch {epoch} val loss {val_loss:.4f}")  # expect: DDP038
            if val_loss < best:  # expect: DDP038
                best = val_loss
                torch.save(model.module.state_dict(), "autoencoder_best.pt")  # expect-preview: DDP014
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
