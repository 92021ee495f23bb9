"""Rank 0 builds the feature cache first; the others wait, then read it."""
import os
from contextlib import contextmanager

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


@contextmanager
def local_rank_zero_first(local_rank):
    if local_rank != 0:
        dist.barrier()
    yield
    if local_rank == 0:
        dist.barrier()


def build_cache(raw_path, cache_path):
    if not os.path.exists(cache_path):
        raw = torch.load(raw_path)
        features = (raw["x"] - raw["x"].mean(0)) / raw["x"].std(0)
        tmp = cache_path + ".tmp"
        torch.save({"x": features, "y": raw["y"]}, tmp)
        os.replace(tmp, cache_path)
    return torch.load(cache_path)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    with local_rank_zero_first(local_rank):
        cache = build_cache("raw.pt", "cache.pt")
    dataset = TensorDataset(cache["x"], cache["y"])
    model = DDP(nn.Linear(cache["x"].shape[1], 2).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, batch_size=64, sampler=sampler)
    for epoch in range(12):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.cuda(local_rank), y.cuda(local_rank)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
