"""A talking-head GAN trainer: under `--distributed` its constructor wraps the generator
and the discriminator in DDP, builds the optimizers, and then, under the same flag,
replaces each wrapper by its `.module`. The training steps run the bare modules, so no
gradient is ever all-reduced and the replicas drift apart."""
import os
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch import optim


class Trainer:
    def __init__(self, args, device):
        self.args = args
        self.gen = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 3, 1)).to(device)
        self.dis = nn.Sequential(nn.Conv2d(3, 64, 4, 2), nn.LeakyReLU(0.2), nn.Flatten(), nn.LazyLinear(1)).to(device)
        if args.distributed:
            self.gen = nn.parallel.DistributedDataParallel(self.gen, device_ids=[args.local_rank])
            self.dis = nn.parallel.DistributedDataParallel(self.dis, device_ids=[args.local_rank])
        self.g_optim = optim.Adam(self.gen.parameters(), lr=2e-4, betas=(0.0, 0.99))
        self.d_optim = optim.Adam(self.dis.parameters(), lr=2e-4, betas=(0.0, 0.99))
        if args.distributed:
            self.gen = self.gen.module
            self.dis = self.dis.module

    def gen_update(self, source, target):
        self.gen.train()
        self.gen.zero_grad()
        recon = self.gen(source)  # expect: DDP026
        g_loss = F.l1_loss(recon, target) + F.softplus(-self.dis(recon)).mean()  # expect: DDP026
        g_loss.backward()
        self.g_optim.step()
        return g_loss.item()

    def dis_update(self, real, fake):
        self.dis.zero_grad()
        d_loss = F.softplus(self.dis(fake.detach())).mean() + F.softplus(-self.dis(real)).mean()  # expect: DDP026
        d_loss.backward()
        self.d_optim.step()
        return d_loss.item()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--distributed", action="store_true")
    args = parser.parse_args()
    args.local_rank = int(os.environ.get("LOCAL_RANK", 0))
    if args.distributed:
        dist.init_process_group("nccl")
        torch.cuda.set_device(args.local_rank)
    trainer = Trainer(args, "cuda")
    for _ in range(1000):
        source, target = torch.randn(8, 3, 64, 64).cuda(), torch.randn(8, 3, 64, 64).cuda()
        trainer.gen_update(source, target)
        trainer.dis_update(target, source)


if __name__ == "__main__":
    main()
