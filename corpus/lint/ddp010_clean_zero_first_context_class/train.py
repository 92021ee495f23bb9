"""Rank 0 prepares the dataset cache first, inside a context manager class whose entry makes
the other ranks wait and whose exit releases them: every rank issues exactly one barrier."""

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class MainRankFirst:
    """Run the block on local rank 0 first, then on the other ranks."""

    def __init__(self):
        self.local_rank = int(os.environ.get("LOCAL_RANK", -1))

    def __enter__(self):
        if self.local_rank > 0:
            dist.barrier(device_ids=[self.local_rank])
        return self

    def __exit__(self, exc_type, exc, tb):
        if self.local_rank == 0:
            dist.barrier(device_ids=[self.local_rank])
        return False


def build_cache(path):
    if not os.path.exists(path):
        torch.save(torch.randn(256, 8), path + ".tmp")
        os.replace(path + ".tmp", path)
    return torch.load(path)


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    with MainRankFirst():
        features = build_cache("features.pt")
    dataset = TensorDataset(features, torch.randint(0, 2, (len(features),)))
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=16, sampler=sampler, drop_last=True)
    model = DistributedDataParallel(torch.nn.Linear(8, 2).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(5):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
