"""A linear-probe script that refuses to run without DDP (`raise NotImplementedError`), and
later keeps a `torch.load` without `map_location` on the non-distributed side of the same
switch: that side can never run, so no rank loads onto another rank's GPU."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main(args, model):
    args.distributed = args.world_size > 1
    if args.distributed:
        dist.init_process_group("nccl")
        torch.cuda.set_device(args.local_rank)
        model = DDP(model.cuda(), device_ids=[args.local_rank])
    else:
        raise NotImplementedError("only DistributedDataParallel is supported")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if args.resume:
        if args.distributed:
            checkpoint = torch.load(args.resume, map_location=f"cuda:{args.local_rank}")
        else:
            checkpoint = torch.load(args.resume)
        model.load_state_dict(checkpoint["state_dict"])
        optimizer.load_state_dict(checkpoint["optimizer"])
    for epoch in range(args.epochs):
        if dist.get_rank() == 0:
            torch.save({"state_dict": model.state_dict(), "optimizer": optimizer.state_dict()}, args.resume)  # expect-preview: DDP014
