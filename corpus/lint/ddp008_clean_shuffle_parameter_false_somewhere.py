"""One builder for every split; evaluation passes `shuffle=False`, and only training
gets a sampler."""

from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from captions import CaptionPairs


def build_loader(split, batch_size, shuffle=True, distributed=False):
    dataset = CaptionPairs("data/pairs", split=split)
    sampler = DistributedSampler(dataset) if distributed else None
    return DataLoader(dataset, batch_size=batch_size, shuffle=shuffle, sampler=sampler)


def loaders(batch_size):
    train = build_loader("train", batch_size, shuffle=False, distributed=True)
    valid = build_loader("valid", batch_size, shuffle=False)
    return train, valid
