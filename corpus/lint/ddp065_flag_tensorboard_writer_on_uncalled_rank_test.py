"""TensorBoard logging meant for rank 0, chosen by `SummaryWriter(...) if is_rank0 else
None`: the helper is named, not called, so every rank opens a writer on the same log
folder and every rank's scalars land in it."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.tensorboard import SummaryWriter


def is_rank0():
    return int(os.environ.get("RANK", "0")) == 0


def train(model_fn, loader, epochs, log_dir="runs/exp"):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DistributedDataParallel(model_fn().cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    writer = SummaryWriter(log_dir) if is_rank0 else None  # expect: DDP065
    step = 0
    for epoch in range(epochs):
        loader.sampler.set_epoch(epoch)
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if writer is not None:
                writer.add_scalar("train/loss", loss.item(), step)
            step += 1
