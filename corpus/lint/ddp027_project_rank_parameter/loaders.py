"""Loaders of the abdominal-scan classifier. The caller passes its local rank, so the
training sampler's seed differs on every rank."""
from torch.utils.data import DataLoader, DistributedSampler


def define_loaders(train_set, val_set, batch_size=8, distributed=False, world_size=1, local_rank=0):
    sampler, val_sampler = None, None
    if distributed:
        sampler = DistributedSampler(
            train_set,
            num_replicas=world_size,
            rank=local_rank,  # expect: DDP019
            shuffle=True,
            seed=world_size + local_rank,  # expect: DDP027
        )
        val_sampler = DistributedSampler(
            val_set, num_replicas=world_size, rank=local_rank, shuffle=False  # expect: DDP019
        )
    train_loader = DataLoader(
        train_set, batch_size=batch_size, sampler=sampler, shuffle=sampler is None, drop_last=True
    )
    val_loader = DataLoader(val_set, batch_size=batch_size * 2, sampler=val_sampler)
    return train_loader, val_loader


def define_test_loader(test_set, batch_size=8, world_size=1, seed=0):
    sampler = DistributedSampler(test_set, num_replicas=world_size, shuffle=True, seed=seed + 1)
    return DataLoader(test_set, batch_size=batch_size, sampler=sampler)
