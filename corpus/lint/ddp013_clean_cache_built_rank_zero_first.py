"""A dataset that writes its index cache from its constructor, built by a factory under a
rank-0-first context: rank 0 writes the cache, the other ranks wait and then read it."""
import os
from contextlib import contextmanager
from pathlib import Path

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, Dataset, DistributedSampler


@contextmanager
def main_process_first(local_rank):
    if local_rank not in (-1, 0):
        dist.barrier()
    yield
    if local_rank == 0:
        dist.barrier()


class IndexedFolder(Dataset):
    def __init__(self, root):
        super().__init__()
        self.cache_file = Path(root) / "index.cache"
        if self.cache_file.exists():
            self.items = torch.load(self.cache_file)
        else:
            self.items = self.build_index(root)

    def build_index(self, root):
        items = sorted(str(p) for p in Path(root).rglob("*.pt"))
        torch.save(items, self.cache_file)
        return items

    def __len__(self):
        return len(self.items)

    def __getitem__(self, index):
        return torch.load(self.items[index])


def make_loader(root, batch_size, local_rank):
    with main_process_first(local_rank):
        dataset = IndexedFolder(root)
    sampler = DistributedSampler(dataset, shuffle=True, drop_last=True)
    return DataLoader(dataset, batch_size=batch_size, sampler=sampler), sampler


if __name__ == "__main__":
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    loader, sampler = make_loader("data/train", 16, local_rank)
    for epoch in range(10):
        sampler.set_epoch(epoch)
        for batch in loader:
            pass
    dist.destroy_process_group()
