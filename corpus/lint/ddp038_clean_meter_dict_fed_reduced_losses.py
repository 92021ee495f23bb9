"""Validation loss of a temporal detector: each batch's loss dict is all-reduced (averaged
over the ranks) before it feeds a dict of running meters, so the logged averages cover
every rank's batches, not one shard."""

import os

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


class AverageMeter:
    def __init__(self) -> None:
        self.sum, self.count = 0.0, 0

    def update(self, value: float) -> None:
        self.sum += value
        self.count += 1

    @property
    def avg(self) -> float:
        return self.sum / max(1, self.count)


def reduce_loss(losses: dict) -> dict:
    for value in losses.values():
        dist.all_reduce(value)
        value /= dist.get_world_size()
    return losses


@torch.no_grad()
def validate(model, val_loader, logger):
    model.eval()
    trackers = {}
    for batch in val_loader:
        losses = reduce_loss(model(**batch, return_loss=True))
        for key, value in losses.items():
            if key not in trackers:
                trackers[key] = AverageMeter()
            trackers[key].update(value.item())
    logger.info("  ".join(f"{k}={m.avg:.4f}" for k, m in trackers.items()))
    return trackers["cost"].avg


def main(model, val_set, logger):
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    sampler = DistributedSampler(val_set, shuffle=False)  # expect-preview: DDP003
    loader = DataLoader(val_set, batch_size=8, sampler=sampler)
    return validate(model, loader, logger)
