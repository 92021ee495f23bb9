"""A resume that restores everything: model, optimizer, scheduler, scaler and step."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler


def train(net, dataset, out_dir, max_steps=100000):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(net.cuda(local_rank), device_ids=[local_rank])
    optim = torch.optim.AdamW(model.parameters(), lr=6e-4, betas=(0.9, 0.95))
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(optim, T_max=max_steps)
    scaler = torch.amp.GradScaler("cuda")
    latest = os.path.join(out_dir, "latest.pt")
    step = 0
    if os.path.exists(latest):
        ckpt = torch.load(latest, map_location="cpu")
        model.module.load_state_dict(ckpt["model"])
        optim.load_state_dict(ckpt["optim"])
        sched.load_state_dict(ckpt["sched"])
        scaler.load_state_dict(ckpt["scaler"])
        step = ckpt["step"]
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, batch_size=8, sampler=sampler)
    epoch = 0
    while step < max_steps:
        sampler.set_epoch(epoch)
        for x, y in loader:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = nn.functional.cross_entropy(model(x.cuda(local_rank)), y.cuda(local_rank))
            optim.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optim)
            scaler.update()
            sched.step()
            step += 1
            if step % 2000 == 0 and dist.get_rank() == 0:
                state = {
                    "model": model.module.state_dict(),
                    "optim": optim.state_dict(),
                    "sched": sched.state_dict(),
                    "scaler": scaler.state_dict(),
                    "step": step,
                }
                torch.save(state, latest + ".tmp")
                os.replace(latest + ".tmp", latest)
        epoch += 1
