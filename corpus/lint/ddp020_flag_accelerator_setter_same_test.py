"""Both device setters run only when `--gpu` is given (one through `torch.accelerator`); on
the other side of the second test the DDP model goes to the default GPU on every rank."""
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel


def main_worker(gpu, args):
    if torch.accelerator.is_available():
        if gpu is not None:
            torch.accelerator.set_device_index(gpu)
    dist.init_process_group("nccl", rank=args.rank, world_size=args.world_size)
    model = nn.Linear(16, 4)
    if gpu is not None:
        torch.cuda.set_device(gpu)
        model.cuda(gpu)
        model = DistributedDataParallel(model, device_ids=[gpu])
    else:
        model.cuda()  # expect: DDP020
        model = DistributedDataParallel(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(10):
        x = torch.randn(8, 16, device=next(model.parameters()).device)
        loss = model(x).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()
