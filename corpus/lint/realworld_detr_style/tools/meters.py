"""Running averages for the console log, summed over ranks at the end of an epoch."""
import time
from collections import defaultdict, deque

import torch
import torch.distributed as dist

from tools.dist import distributed_ready


class Meter:
    def __init__(self, recent=20, template="{last:.4f} (avg {mean:.4f})"):
        self.recent = deque(maxlen=recent)
        self.sum = 0.0
        self.n = 0
        self.template = template

    def add(self, value, weight=1):
        self.recent.append(value)
        self.sum += value * weight
        self.n += weight

    def sum_over_ranks(self):
        """Totals from every rank (the recent window stays local)."""
        if not distributed_ready():
            return
        packed = torch.tensor([self.n, self.sum], dtype=torch.float64, device="cuda")
        dist.barrier()
        dist.all_reduce(packed)
        n, total = packed.tolist()
        self.n, self.sum = int(n), total

    @property
    def mean(self):
        return self.sum / max(self.n, 1)

    def __str__(self):
        last = self.recent[-1] if self.recent else 0.0
        return self.template.format(last=last, mean=self.mean)


class Board:
    """Named meters and a progress line every few iterations."""

    def __init__(self, sep="  "):
        self.meters = defaultdict(Meter)
        self.sep = sep

    def log(self, **values):
        for key, value in values.items():
            self.meters[key].add(value.item() if torch.is_tensor(value) else value)

    def sum_over_ranks(self):
        for each in self.meters.values():
            each.sum_over_ranks()

    def means(self):
        return {key: meter.mean for key, meter in self.meters.items()}

    def track(self, batches, every, title):
        began = time.time()
        total = len(batches)
        for i, batch in enumerate(batches):
            yield batch
            if i % every == 0:
                print(f"{title} {i}/{total} {self}")
        print(f"{title} done in {time.time() - began:.0f}s")

    def __str__(self):
        return self.sep.join(f"{key} {meter}" for key, meter in self.meters.items())


def stack_pairs(batch):
    """Collate (image, target) pairs into a tuple of images and a tuple of targets."""
    return tuple(zip(*batch))
