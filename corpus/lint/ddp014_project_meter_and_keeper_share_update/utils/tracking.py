"""Running meters and the checkpoint keeper of the training script."""
import os

import torch
import torch.distributed as dist


class RunningMean:
    def __init__(self, reduce_across_ranks=False):
        self.reduce_across_ranks = reduce_across_ranks
        self.sum = 0.0
        self.count = 0

    def update(self, value, n=1):
        if self.reduce_across_ranks and dist.is_initialized():
            packed = torch.tensor([value * n, n], dtype=torch.float64, device="cuda")
            dist.all_reduce(packed)
            value, n = packed[0].item() / packed[1].item(), int(packed[1].item())
        self.sum += value * n
        self.count += n

    @property
    def mean(self):
        return self.sum / max(self.count, 1)


class CheckpointKeeper:
    def __init__(self, model, optimizer, folder):
        self.model = model
        self.optimizer = optimizer
        self.folder = folder
        self.best = None

    def update(self, epoch, score):
        if dist.get_rank() != 0:
            return
        state = {
            "epoch": epoch,
            "model": self.model.module.state_dict(),
            "optimizer": self.optimizer.state_dict(),
        }
        torch.save(state, os.path.join(self.folder, "last.pth.tar"))  # expect-preview: DDP014
        if self.best is None or score > self.best:
            self.best = score
