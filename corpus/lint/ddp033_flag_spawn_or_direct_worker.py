"""The worker runs in each process `mp.spawn` starts, or once, called directly, when the
script runs on one GPU: under spawn every process resumes from `checkpoint.pth.tar`
(written by rank 0 from the GPU) without `map_location`."""

import argparse
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main_worker(gpu, ngpus_per_node, args):
    if args.distributed:
        dist.init_process_group(
            "nccl", init_method=args.dist_url, world_size=ngpus_per_node, rank=gpu
        )
    torch.cuda.set_device(gpu)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10)).cuda(gpu)
    if args.distributed:
        model = DDP(model, device_ids=[gpu])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    begin_epoch = 0
    checkpoint_file = os.path.join(args.output_dir, "checkpoint.pth.tar")
    if args.auto_resume and os.path.exists(checkpoint_file):
        checkpoint = torch.load(checkpoint_file)  # expect: DDP033
        begin_epoch = checkpoint["epoch"]
        model.load_state_dict(checkpoint["state_dict"])
        optimizer.load_state_dict(checkpoint["optimizer"])
    for epoch in range(begin_epoch, args.epochs):
        x = torch.randn(32, 64, device=gpu)
        loss = model(x).logsumexp(dim=1).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if not args.distributed or gpu == 0:
            state = {
                "epoch": epoch + 1,
                "state_dict": model.state_dict(),
                "optimizer": optimizer.state_dict(),
            }
            torch.save(state, os.path.join(args.output_dir, f"epoch_{epoch:03d}.pth.tar"))
            torch.save(state, checkpoint_file + ".tmp")
            os.replace(checkpoint_file + ".tmp", checkpoint_file)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--output_dir", default="output")
    parser.add_argument("--epochs", type=int, default=140)
    parser.add_argument("--auto_resume", action="store_true")
    parser.add_argument("--distributed", action="store_true")
    parser.add_argument("--dist_url", default="tcp://127.0.0.1:23456")
    args = parser.parse_args()
    ngpus_per_node = torch.cuda.device_count()
    if args.distributed:
        mp.spawn(main_worker, nprocs=ngpus_per_node, args=(ngpus_per_node, args))
    else:
        main_worker(0, ngpus_per_node, args)


if __name__ == "__main__":
    main()
