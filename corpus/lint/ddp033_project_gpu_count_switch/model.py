"""The super-resolution network, wrapped in DDP when several GPUs train it."""
import os

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, args, data):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(),
                                 nn.Conv2d(64, 12, 3, padding=1), nn.PixelShuffle(2))
        path = os.path.join(args.save, "model_latest.pt")
        if args.n_gpus > 1:
            if args.resume:
                state = torch.load(path, map_location=f"cuda:{data.local_rank}")
                self.net.load_state_dict(state)
        else:
            if args.resume:
                self.net.load_state_dict(torch.load(path))
        self.net.cuda()
        if args.n_gpus > 1:
            self.net = nn.parallel.DistributedDataParallel(self.net, [data.local_rank])

    def forward(self, x):
        return self.net(x)

    def save(self, args, rank):
        net = self.net.module if args.n_gpus > 1 else self.net
        if rank == 0:
            torch.save(net.state_dict(), os.path.join(args.save, "model_latest.pt.tmp"))
            os.replace(os.path.join(args.save, "model_latest.pt.tmp"),
                       os.path.join(args.save, "model_latest.pt"))
