"""Resumes that restore the optimizer through a helper, fine-tuning from pretrained
weights, and plain SGD (no state to lose): nothing to report."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler


def restore_optimizer(optim, state):
    optim.load_state_dict(state["optim"])


def finetune(backbone, dataset, args):
    local_rank = int(os.environ["LOCAL_RANK"])
    pretrained = torch.load(args.pretrained, map_location="cpu")
    backbone.load_state_dict(pretrained["model"], strict=False)
    model = DDP(backbone.cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
    start_epoch = 0
    if args.resume:
        ckpt = torch.load(args.resume, map_location="cpu")
        model.module.load_state_dict(ckpt["model"])
        restore_optimizer(optimizer, ckpt)
        start_epoch = ckpt["epoch"] + 1
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, batch_size=32, sampler=sampler)
    for epoch in range(start_epoch, args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            state = {
                "model": model.module.state_dict(),
                "optim": optimizer.state_dict(),
                "epoch": epoch,
            }
            torch.save(state, f"{args.out}/epoch_{epoch:03d}.pth")


def plain_sgd(net, dataset, args):
    local_rank = int(os.environ["LOCAL_RANK"])
    model = DDP(net.cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    start_epoch = 0
    if args.resume:
        ckpt = torch.load(args.resume, map_location="cpu")
        model.module.load_state_dict(ckpt["model"])
        start_epoch = ckpt["epoch"] + 1
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, batch_size=32, sampler=sampler)
    for epoch in range(start_epoch, args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            state = {"model": model.module.state_dict(), "epoch": epoch}
            torch.save(state, f"{args.out}/e{epoch}.pth")
