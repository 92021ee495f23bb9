"""An average meter synchronised across processes: the averages are summed over the ranks
and divided in place by the world size, so every synced average is the mean over the
ranks."""
import os

import torch
import torch.distributed as dist

WORLD_SIZE = int(os.environ.get("WORLD_SIZE", 1))


class AverageMeter:
    def __init__(self):
        self.sum = 0.0
        self.count = 0
        self.avg = 0.0

    def update(self, value, n=1):
        self.sum += value * n
        self.count += n
        self.avg = self.sum / self.count

    def synchronize(self):
        if WORLD_SIZE == 1:
            return
        t = torch.tensor([self.avg], dtype=torch.float64, device="cuda")
        dist.barrier()
        dist.all_reduce(t)
        t.div_(WORLD_SIZE)
        self.avg = t.item()
