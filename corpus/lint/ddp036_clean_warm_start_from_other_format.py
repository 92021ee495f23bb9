"""Warm start from an exported model of another run (its own format: weights and the
step it was exported at), while this run's checkpoints hold the optimizer too."""

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def fit(net, loader, sampler, args):
    local_rank = int(os.environ["LOCAL_RANK"])
    model = DDP(net.cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
    step = 0
    if args.init_from:
        exported = torch.load(args.init_from, map_location="cpu")
        net.load_state_dict(exported["weights"])
        step = exported["global_step"]
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
        if dist.get_rank() == 0:
            state = {"model": net.state_dict(), "optimizer": optimizer.state_dict(), "step": step}
            torch.save(state, os.path.join(args.out, f"ckpt_{epoch}.pt"))
