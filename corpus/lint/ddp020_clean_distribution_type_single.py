"""`--distribution_type` picks the mode: `multi` spawns one process per GPU and pins each
to its device; `single` is one process driving every GPU through DataParallel, where
`.cuda()` on the default device is right (there are no ranks)."""
import argparse

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn


def train(gpu, opt):
    if opt.distribution_type == "multi":
        dist.init_process_group("nccl", init_method=opt.dist_url, world_size=opt.world_size, rank=gpu)
    model = nn.Sequential(nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 3))
    if opt.distribution_type == "multi":
        torch.cuda.set_device(gpu)
        model = nn.parallel.DistributedDataParallel(model.cuda(gpu), device_ids=[gpu])
    elif opt.distribution_type == "single":
        model = nn.DataParallel(model.cuda())
    else:
        torch.cuda.set_device(gpu)
        model = model.cuda(gpu)
    optimizer = torch.optim.Adam(model.parameters(), lr=opt.lr)
    for _ in range(opt.steps):
        optimizer.zero_grad()
        model(torch.randn(16, 128).cuda()).pow(2).mean().backward()
        optimizer.step()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--distribution_type", default="single", choices=["multi", "single", None])
    parser.add_argument("--dist_url", default="tcp://127.0.0.1:9991")
    parser.add_argument("--gpu", type=int, default=None)
    parser.add_argument("--lr", type=float, default=2e-4)
    parser.add_argument("--steps", type=int, default=100)
    opt = parser.parse_args()
    if opt.distribution_type == "multi":
        opt.world_size = torch.cuda.device_count()
        mp.spawn(train, nprocs=opt.world_size, args=(opt,))
    else:
        train(opt.gpu, opt)


if __name__ == "__main__":
    main()
