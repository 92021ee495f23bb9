"""A data wrapper that also builds a loader over the whole dataset on a shuffling
DistributedSampler and stores it in an attribute of its loaders that no code of the project
ever reads: nothing passes over it, so its order never repeats. The training split is
drawn at random once and read in order (`shuffle=False`), as the pattern regressor was
tuned with."""
from types import SimpleNamespace

import torch
from torch.utils.data import DataLoader, random_split
from torch.utils.data.distributed import DistributedSampler


class DataWrapper:
    def __init__(self, dataset, batch_size):
        self.dataset = dataset
        self.batch_size = batch_size
        self.loaders = SimpleNamespace()
        n_val = len(dataset) // 10
        self.training, self.validation = random_split(
            dataset, [len(dataset) - n_val, n_val], generator=torch.Generator().manual_seed(0)
        )

    def new_loaders(self):
        self.loaders.whole = DataLoader(
            self.dataset, self.batch_size, sampler=DistributedSampler(self.dataset)
        )
        self.train_sampler = DistributedSampler(self.training, shuffle=False, drop_last=True)
        self.loaders.train = DataLoader(
            self.training, self.batch_size, sampler=self.train_sampler, drop_last=True
        )
        self.loaders.validation = DataLoader(
            self.validation, self.batch_size, sampler=DistributedSampler(self.validation, shuffle=False)
        )
