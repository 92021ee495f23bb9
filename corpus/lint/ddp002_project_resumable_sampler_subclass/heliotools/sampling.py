"""Samplers that can resume a run part-way through an epoch."""

import itertools

from torch.utils.data import DistributedSampler


class ResumableDistributedSampler(DistributedSampler):
    """Skips the indices already yielded before a restart; the order is the parent's."""

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        super().__init__(dataset, num_replicas, rank, shuffle, seed, drop_last)
        self.yielded = 0
        self.resume_at = None

    def __iter__(self):
        start = self.resume_at or 0
        self.resume_at = None
        self.yielded = start
        for index in itertools.islice(super().__iter__(), start, None):
            self.yielded += 1
            yield index

    def state_dict(self):
        return {"yielded": self.yielded}

    def load_state_dict(self, state):
        self.resume_at = state["yielded"]


class StridedEvalSampler(DistributedSampler):
    """Every N-th sample for rank r, in file order: no shuffling, no padding."""

    def __iter__(self):
        return iter(range(self.rank, len(self.dataset), self.num_replicas))
