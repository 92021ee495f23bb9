"""Loaders built by name from a configuration."""
import torch
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from ..utils import distributed_is_initialized


class TrainLoader(DataLoader):
    def __init__(self, root, batch_size):
        dataset = TensorDataset(torch.randn(50000, 3 * 32 * 32), torch.randint(0, 10, (50000,)))
        sampler = None
        if distributed_is_initialized():
            sampler = DistributedSampler(dataset)  # expect: DDP002
        super().__init__(dataset, batch_size=batch_size, shuffle=sampler is None, sampler=sampler)
