"""engine.py of a multi-file project: the process group and the device are set up in
main.py (init_distributed_mode); this module only runs the loops."""
import math

import torch
import torch.distributed as dist
import torch.nn as nn


def train_one_epoch(model, loader, optimizer, scaler, epoch, print_freq=50):
    model.train()
    for step, (images, target) in enumerate(loader):
        images = images.cuda(non_blocking=True)
        target = target.cuda(non_blocking=True)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = nn.functional.cross_entropy(model(images), target)
        if not math.isfinite(loss.item()):
            raise RuntimeError(f"loss is {loss.item()}, stopping")
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        if step % print_freq == 0 and dist.get_rank() == 0:
            print(f"epoch {epoch} step {step} loss {loss.item():.4f}")


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    stats = torch.zeros(2, device="cuda")
    for images, target in loader:
        images, target = images.cuda(), target.cuda()
        stats[0] += (model(images).argmax(1) == target).sum()
        stats[1] += target.numel()
    dist.all_reduce(stats)
    return (stats[0] / stats[1]).item()
