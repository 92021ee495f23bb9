"""Builds the training loader: on a shuffling DistributedSampler when `dist` is set, as a
plain loader otherwise (the loader classes imported where they are used)."""


def build_loader(dataset, batch_size, dist=False):
    from torch.utils.data import DataLoader

    sampler = None
    if not dist:
        loader = DataLoader(dataset, batch_size=batch_size, shuffle=True)
    else:
        from torch.utils.data.distributed import DistributedSampler

        sampler = DistributedSampler(dataset, shuffle=True, seed=1234)
        loader = DataLoader(dataset, batch_size=batch_size, sampler=sampler)
    return loader, sampler
