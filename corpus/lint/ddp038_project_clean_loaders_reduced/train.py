"""The autoencoder's trainer: each rank sums its validation shard's loss (the data module
shards the validation set) and the sums and counts are all-reduced before rank 0 logs the
mean and keeps the best weights: the whole validation set decides."""
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
        totals = torch.zeros(2, device="cuda")
        for (volume,) in val_loader:
            volume = volume.cuda()
            with torch.no_grad():
                totals += torch.stack(
                    [nn.functional.l1_loss(model(volume), volume), torch.ones((), device="cuda")]
                )
        dist.all_reduce(totals)
        val_loss = (totals[0] / totals[1]).item()
        if rank == 0:
            print(f"epoch {epoch} val loss {val_loss:.4f}")
            if val_loss < best:
                best = val_loss
                torch.save(model.module.state_dict(), "autoencoder_best.pt")  # expect-preview: DDP014
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
