"""One loader factory for both splits: the split decides the sampler's shuffling."""
from torch.utils.data import DataLoader, DistributedSampler


def build_dataloader(dataset, batch_size, training=True):
    if training:
        sampler = DistributedSampler(dataset, drop_last=True)
    else:
        sampler = DistributedSampler(dataset, shuffle=False)
    loader = DataLoader(dataset, batch_size=batch_size, sampler=sampler, num_workers=2)
    return dataset, loader, sampler
