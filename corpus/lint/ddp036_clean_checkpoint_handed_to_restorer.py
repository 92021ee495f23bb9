"""The loaded checkpoint goes whole to a restore helper: what it restores is out of
sight, so the optimizer may well be among it."""

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from runtime import restore_training_state


def train(net, loader, sampler, args):
    local_rank = int(os.environ["LOCAL_RANK"])
    model = DDP(net.cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    start_epoch = 0
    if os.path.isfile(args.ckpt):
        ckpt = torch.load(args.ckpt, map_location="cpu")
        net.load_state_dict(ckpt["model"])
        start_epoch = ckpt["epoch"] + 1
        restore_training_state(ckpt, optimizer=optimizer)
    for epoch in range(start_epoch, args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            state = {"model": net.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}
            torch.save(state, args.ckpt + ".tmp")
            os.replace(args.ckpt + ".tmp", args.ckpt)
