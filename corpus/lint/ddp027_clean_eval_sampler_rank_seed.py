"""The training sampler shares the seed; the evaluation sampler gets a rank-offset seed but
does not shuffle, so the seed is never used. A loop variable named `rank` in the shard
report holds every rank's value in one process."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def shard_sizes(dataset, world_size, seed):
    sizes = []
    for rank in range(world_size):
        s = DistributedSampler(dataset, num_replicas=world_size, rank=rank, seed=seed + rank)
        sizes.append(len(s))
    return sizes


def main(seed=7):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    train_set = TensorDataset(torch.randn(3000, 8), torch.randn(3000, 1))
    val_set = TensorDataset(torch.randn(500, 8), torch.randn(500, 1))
    if rank == 0:
        print("shard sizes", shard_sizes(train_set, world, seed))
    train_sampler = DistributedSampler(train_set, seed=seed, drop_last=True)
    val_sampler = DistributedSampler(val_set, shuffle=False, seed=seed + rank)  # expect-preview: DDP003
    train_loader = DataLoader(train_set, batch_size=30, sampler=train_sampler)
    val_loader = DataLoader(val_set, batch_size=50, sampler=val_sampler)
    model = DDP(nn.Linear(8, 1).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters())
    for epoch in range(4):
        train_sampler.set_epoch(epoch)
        model.train()
        for x, y in train_loader:
            loss = nn.functional.mse_loss(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():
            total = torch.zeros(2, device=local_rank)
            for x, y in val_loader:
                err = nn.functional.mse_loss(model(x.cuda(local_rank)), y.cuda(local_rank),
                                             reduction="sum")
                total += torch.stack([err, torch.tensor(float(len(y)), device=local_rank)])
            dist.all_reduce(total)
        if rank == 0:
            print(epoch, (total[0] / total[1]).item())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
