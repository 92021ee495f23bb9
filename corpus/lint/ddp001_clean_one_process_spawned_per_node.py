"""Contrastive image-quality pretraining across nodes: each node runs this script once
(`--nodes 4 --nr <node>`), which spawns a single process (`args.gpus = 1`) whose global
rank is `args.nr * args.gpus + gpu`. With one process on each machine, `cuda:0` is that
process's own GPU."""
import argparse
import datetime
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler


def main(gpu, args):
    rank = args.nr * args.gpus + gpu
    if args.nodes > 1:
        store = "file://" + os.path.join(args.shared_dir, "rendezvous")
        dist.init_process_group("nccl", init_method=store, rank=rank, world_size=args.world_size,
                                timeout=datetime.timedelta(seconds=3600))
    patches = torch.load(os.path.join(args.data, "patches.pt"))
    sampler = DistributedSampler(patches, num_replicas=args.world_size, rank=rank) if args.nodes > 1 else None
    loader = DataLoader(patches, batch_size=args.batch_size, sampler=sampler, shuffle=sampler is None)
    model = nn.Sequential(nn.Conv2d(3, 64, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten()).to(args.device)
    if args.nodes > 1:
        model = DDP(model, device_ids=[gpu])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.6, momentum=0.9)
    for epoch in range(args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        for views in loader:
            a, b = model(views[:, 0].to(args.device)), model(views[:, 1].to(args.device))
            loss = nn.functional.cosine_embedding_loss(a, b, torch.ones(a.size(0), device=args.device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=1)
    parser.add_argument("--nr", type=int, default=0)
    parser.add_argument("--data", default="data/")
    parser.add_argument("--shared-dir", dest="shared_dir", default="/shared/run")
    parser.add_argument("--batch-size", dest="batch_size", type=int, default=256)
    parser.add_argument("--epochs", type=int, default=25)
    args = parser.parse_args()
    args.device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    args.gpus = 1
    args.world_size = args.gpus * args.nodes
    return args


if __name__ == "__main__":
    args = parse_args()
    if args.nodes > 1:
        mp.spawn(main, args=(args,), nprocs=args.gpus, join=True)
    else:
        main(0, args)
