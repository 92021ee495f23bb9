"""Data helpers shared by the fine-tuning scripts."""

from torch.utils import data


def data_sampler(dataset, shuffle, distributed):
    if distributed:
        return data.distributed.DistributedSampler(dataset, shuffle=shuffle)  # expect: DDP002
    if shuffle:
        return data.RandomSampler(dataset)
    return data.SequentialSampler(dataset)


def sample_data(loader):
    while True:
        for batch in loader:
            yield batch


def requires_grad(model, flag=True):
    for p in model.parameters():
        p.requires_grad = flag
