"""Each rank reads its own slice of the shard files: sharding without a sampler."""
import glob
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import ConcatDataset, DataLoader, TensorDataset


def load_shards(pattern, rank, world_size):
    files = sorted(glob.glob(pattern))
    mine = files[rank::world_size]
    parts = []
    for path in mine:
        blob = torch.load(path)
        parts.append(TensorDataset(blob["x"], blob["y"]))
    return ConcatDataset(parts)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    model = DDP(nn.Linear(64, 10).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train_set = load_shards("shards/train-*.pt", rank, world_size)
    train_loader = DataLoader(train_set, batch_size=32, shuffle=True, drop_last=True)
    steps = torch.tensor(len(train_loader), device=f"cuda:{local_rank}")
    dist.all_reduce(steps, op=dist.ReduceOp.MIN)
    for epoch in range(10):
        for step, (x, y) in enumerate(train_loader):
            if step >= steps.item():
                break
            x, y = x.cuda(local_rank), y.cuda(local_rank)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
