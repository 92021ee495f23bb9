"""Distributed helpers: the sampler for either split, sharded when the job is distributed."""
from torch.utils.data import RandomSampler, SequentialSampler
from torch.utils.data.distributed import DistributedSampler


def make_data_sampler(dataset, shuffle, distributed):
    if distributed:
        return DistributedSampler(dataset, shuffle=shuffle, drop_last=shuffle)
    if shuffle:
        return RandomSampler(dataset)
    return SequentialSampler(dataset)
