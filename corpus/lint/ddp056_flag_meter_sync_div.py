"""An average meter synchronised across processes: the averages are summed over the ranks
and the division by the world size is discarded, so every synced average is N times the
real one."""
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
        t.div(WORLD_SIZE)  # expect: DDP056
        self.avg = t.item()


def log_epoch(loss_meter, epoch):
    loss_meter.synchronize()
    if dist.get_rank() == 0:
        print(f"epoch {epoch}: loss {loss_meter.avg:.4f}")
