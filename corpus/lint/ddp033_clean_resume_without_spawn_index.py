"""The spawn-or-direct template: `mp.spawn` passes each worker its GPU index, so the
`if args.gpu is None:` resume runs only in the one process started without spawning,
and its checkpoint lands on that process's own GPU. Workers map onto their own device."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn


def main_worker(gpu, ngpus, args):
    args.gpu = gpu
    if args.multiprocessing_distributed:
        dist.init_process_group("nccl", init_method=args.dist_url, world_size=args.world_size, rank=gpu)
    model = nn.Sequential(nn.Conv2d(3, 16, 3), nn.ReLU(), nn.Flatten(), nn.LazyLinear(10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    if args.gpu is not None:
        torch.cuda.set_device(args.gpu)
    model.cuda(args.gpu)
    if args.multiprocessing_distributed:
        model = nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu])
    if args.resume and os.path.isfile(args.resume):
        if args.gpu is None:
            checkpoint = torch.load(args.resume)
        else:
            checkpoint = torch.load(args.resume, map_location=f"cuda:{args.gpu}")
        model.load_state_dict(checkpoint["state_dict"])
        optimizer.load_state_dict(checkpoint["optimizer"])
    for _ in range(args.epochs):
        optimizer.zero_grad()
        model(torch.randn(8, 3, 32, 32).cuda(args.gpu)).sum().backward()
        optimizer.step()
    if not args.multiprocessing_distributed or dist.get_rank() == 0:
        state = {"state_dict": model.state_dict(), "optimizer": optimizer.state_dict()}
        torch.save(state, "checkpoint.pth.tar.tmp")
        os.replace("checkpoint.pth.tar.tmp", "checkpoint.pth.tar")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--resume", default="")
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--gpu", type=int, default=None)
    parser.add_argument("--multiprocessing-distributed", action="store_true")
    parser.add_argument("--dist-url", default="tcp://127.0.0.1:23456")
    args = parser.parse_args()
    ngpus = torch.cuda.device_count()
    if args.multiprocessing_distributed:
        args.world_size = ngpus
        mp.spawn(main_worker, nprocs=ngpus, args=(ngpus, args))
    else:
        main_worker(args.gpu, ngpus, args)


if __name__ == "__main__":
    main()
