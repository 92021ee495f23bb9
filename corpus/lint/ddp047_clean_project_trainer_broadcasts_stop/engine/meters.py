"""Running averages that can be combined over the ranks."""
import torch
import torch.distributed as dist

from engine.comm import is_dist_initialized


class AverageMeter:
    def __init__(self):
        self.total = 0.0
        self.count = 0

    def update(self, value, n=1):
        self.total += value * n
        self.count += n

    def synchronize(self):
        if not is_dist_initialized():
            return
        totals = torch.tensor([self.total, self.count], dtype=torch.float64, device="cuda")
        dist.barrier()
        dist.all_reduce(totals)
        self.total, self.count = totals.tolist()

    @property
    def avg(self):
        return self.total / max(self.count, 1)
