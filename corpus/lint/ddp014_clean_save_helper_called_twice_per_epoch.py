"""A save helper of the script called twice at the end of each epoch: once onto a file
named for the epoch, once onto `model-latest.pth`, which `--resume` reads back. The
numbered file holds the same state, so a torn `model-latest.pth` costs nothing but a
restart from the numbered file: shown only under --preview."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def store(net, opt, epoch, filename):
    state = {"net": net.module.state_dict(), "opt": opt.state_dict(), "epoch": epoch}
    torch.save(state, filename)  # expect-preview: DDP014


def run(args):
    dist.init_process_group(backend="nccl")
    device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
    torch.cuda.set_device(device)
    points = torch.utils.data.TensorDataset(torch.randn(2048, 3, 256), torch.randn(2048, 40))
    sampler = DistributedSampler(points)
    loader = DataLoader(points, batch_size=16, sampler=sampler, drop_last=True)
    net = DistributedDataParallel(nn.Conv1d(3, 40, 1).to(device), device_ids=[device.index])
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    start = 0
    if args.resume:
        ckpt = torch.load(args.resume, map_location="cpu")
        net.module.load_state_dict(ckpt["net"])
        opt.load_state_dict(ckpt["opt"])
        start = ckpt["epoch"]
    for epoch in range(start, args.epochs):
        sampler.set_epoch(epoch)
        for cloud, target in loader:
            out = net(cloud.to(device)).mean(-1)
            loss = (out - target.to(device)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        if dist.get_rank() == 0 and (epoch + 1) % args.save_freq == 0:
            store(net, opt, epoch + 1, os.path.join(args.log_dir, "model-%d.pth" % epoch))
            store(net, opt, epoch + 1, os.path.join(args.log_dir, "model-latest.pth"))
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--resume", default="")
    parser.add_argument("--epochs", type=int, default=200)
    parser.add_argument("--save_freq", type=int, default=10)
    parser.add_argument("--log_dir", default="logs")
    run(parser.parse_args())
