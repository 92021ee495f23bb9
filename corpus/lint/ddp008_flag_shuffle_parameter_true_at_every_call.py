"""Image-to-text translation loaders: one builder serves training and validation."""

from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from captions import CaptionPairs


def build_loader(split, batch_size, shuffle=True):
    dataset = CaptionPairs("data/pairs", split=split)
    sampler = DistributedSampler(dataset, shuffle=shuffle)
    return DataLoader(
        dataset,
        batch_size=batch_size,
        shuffle=shuffle,  # expect: DDP008
        sampler=sampler,
        num_workers=4,
        drop_last=split == "train",
    )


def loaders(batch_size):
    return build_loader("train", batch_size), build_loader("valid", batch_size * 2)
