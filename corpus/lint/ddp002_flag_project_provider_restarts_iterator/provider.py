"""Endless batches for a step-based trainer: the loader is rebuilt when it runs out."""
from torch.utils.data import DataLoader, DistributedSampler


class BatchProvider:
    def __init__(self, dataset, batch_size, distributed=False):
        self.dataset = dataset
        self.batch_size = batch_size
        self.distributed = distributed
        self.epoch = 0
        self._restart()

    def _restart(self):
        if self.distributed:
            sampler = DistributedSampler(self.dataset, shuffle=True, drop_last=True)  # expect: DDP002
            loader = DataLoader(self.dataset, batch_size=self.batch_size, sampler=sampler,
                                drop_last=True, num_workers=4)
        else:
            loader = DataLoader(self.dataset, batch_size=self.batch_size, shuffle=True,
                                drop_last=True, num_workers=4)
        self.steps_per_epoch = len(loader)
        self.batches = loader.__iter__()

    def next(self):
        try:
            return next(self.batches)
        except StopIteration:
            self.epoch += 1
            self._restart()
            return next(self.batches)
