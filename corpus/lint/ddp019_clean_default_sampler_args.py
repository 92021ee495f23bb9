"""Sampler built with defaults (rank and world size from the process group); the local
rank is used only for the device and the per-node data cache directory."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def cached_dataset(cache_dir, local_rank):
    path = os.path.join(cache_dir, "features.pt")
    if local_rank == 0 and not os.path.exists(path):
        os.makedirs(cache_dir, exist_ok=True)
        tmp = f"{path}.tmp"
        torch.save((torch.randn(4096, 24), torch.randint(0, 6, (4096,))), tmp)
        os.replace(tmp, path)
    dist.barrier()
    return TensorDataset(*torch.load(path))


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    data = cached_dataset("/tmp/feature_cache", local_rank)
    sampler = DistributedSampler(data, shuffle=True, seed=1234, drop_last=True)
    loader = DataLoader(data, batch_size=64, sampler=sampler, num_workers=2)
    model = DDP(nn.Linear(24, 6).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for epoch in range(6):
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
