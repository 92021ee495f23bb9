"""The twin of `ddp026_flag_trainer_unwraps_after_wrap`: the constructor keeps the DDP
wrappers, training runs through them, and `.module` is taken only to save the weights."""
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
        if args.distributed:
            self.gen = nn.parallel.DistributedDataParallel(self.gen, device_ids=[args.local_rank])
        self.g_optim = optim.Adam(self.gen.parameters(), lr=2e-4, betas=(0.0, 0.99))

    def bare(self):
        return self.gen.module if self.args.distributed else self.gen

    def gen_update(self, source, target):
        self.gen.train()
        self.gen.zero_grad()
        g_loss = F.l1_loss(self.gen(source), target)
        g_loss.backward()
        self.g_optim.step()
        return g_loss.item()

    def save(self, path):
        torch.save({"gen": self.bare().state_dict()}, path)


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
    if not args.distributed or dist.get_rank() == 0:
        trainer.save("gen.pt")


if __name__ == "__main__":
    main()
