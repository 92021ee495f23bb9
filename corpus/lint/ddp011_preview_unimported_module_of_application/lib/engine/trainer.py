"""An iteration-based training loop kept from the detector codebase this project started
from. The project's own script trains through `lib.model` and imports nothing from here."""

import logging

import torch
import torch.distributed as dist

from lib.utils.comm import get_world_size

log = logging.getLogger(__name__)


def reduce_losses(losses):
    """Average a dict of scalar losses over the ranks, for logging."""
    world_size = get_world_size()
    if world_size < 2:
        return losses
    with torch.no_grad():
        names = sorted(losses)
        stacked = torch.stack([losses[k] for k in names])
        dist.all_reduce(stacked)
        stacked /= world_size
    return dict(zip(names, stacked))


def run_iterations(model, loader, optimizer, scheduler, max_iter):
    model.train()
    for iteration, (images, targets) in enumerate(loader):
        if any(len(t) == 0 for t in targets):
            continue  # expect-preview: DDP011
        images = images.cuda(non_blocking=True)
        targets = [t.cuda(non_blocking=True) for t in targets]
        losses = model(images, targets)
        total = sum(losses.values())
        reduced = reduce_losses(losses)
        optimizer.zero_grad()
        total.backward()
        optimizer.step()
        scheduler.step()
        if iteration % 20 == 0:
            log.info("iter %d loss %.4f", iteration, float(sum(reduced.values())))
        if iteration >= max_iter:
            break
