"""Loaders for voxel segmentation: the sampler is chosen by the `distributed` flag."""

from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def make_loader(dataset, batch_size=2, workers=4, training=True, distributed=False):
    sampler = DistributedSampler(dataset, shuffle=training) if distributed else None
    return DataLoader(
        dataset,
        batch_size=batch_size,
        num_workers=workers,
        shuffle=training and sampler is None,
        sampler=sampler,
        drop_last=training,
        collate_fn=dataset.collate,
    )
