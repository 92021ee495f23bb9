"""Paired sentence files as batches of token ids."""

import torch
from torch.utils.data import DataLoader, Dataset, DistributedSampler


class PairDataset(Dataset):
    def __init__(self, path: str) -> None:
        self.pairs = torch.load(path)

    def __len__(self) -> int:
        return len(self.pairs)

    def __getitem__(self, index: int):
        return self.pairs[index]


def make_loader(path, batch_size, shuffle, num_processes, rank):
    dataset = PairDataset(path)
    if num_processes > 1:  # one shard per process
        sampler = DistributedSampler(dataset, num_processes, rank, shuffle)
        return DataLoader(dataset, batch_size, sampler=sampler)
    return DataLoader(dataset, batch_size, shuffle=shuffle)
