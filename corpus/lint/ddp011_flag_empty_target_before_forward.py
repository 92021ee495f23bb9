"""Detection trainer loop (engine style): images without boxes are skipped before the forward."""
import logging
import time

import torch
import torch.distributed as dist

logger = logging.getLogger("detector.trainer")


def reduce_loss_dict(loss_dict):
    """Average the losses over the ranks, for logging."""
    world_size = dist.get_world_size()
    if world_size < 2:
        return loss_dict
    with torch.no_grad():
        names = sorted(loss_dict)
        stacked = torch.stack([loss_dict[name] for name in names])
        dist.all_reduce(stacked)
        stacked /= world_size
    return dict(zip(names, stacked))


def do_train(model, data_loader, optimizer, scheduler, device, start_iter=0, log_period=20):
    model.train()
    end = time.time()
    for iteration, (images, targets, image_ids) in enumerate(data_loader, start_iter):
        if any(len(target) < 1 for target in targets):
            logger.warning("iteration %d: an image without boxes in %s", iteration, image_ids)
            continue  # expect: DDP011
        images = images.to(device)
        targets = [target.to(device) for target in targets]
        loss_dict = model(images, targets)
        losses = sum(loss for loss in loss_dict.values())
        reduced = reduce_loss_dict(loss_dict)
        optimizer.zero_grad()
        losses.backward()
        optimizer.step()
        scheduler.step()
        if iteration % log_period == 0:
            total = sum(value.item() for value in reduced.values())
            logger.info("iter %d loss %.4f (%.2fs)", iteration, total, time.time() - end)
        end = time.time()
