"""Segmentation distillation: after validation the student is saved where the job is not
distributed, or by local rank 0 of a distributed one; the test compares the flag with
`True` explicitly."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def save_student(model, args, is_best=False):
    os.makedirs(args.save_dir, exist_ok=True)
    filename = os.path.join(args.save_dir, "kd_{}_{}.pth".format(args.student, args.dataset))
    if args.distributed:
        model = model.module
    torch.save(model.state_dict(), filename)  # expect-preview: DDP014


class Distiller:
    def __init__(self, args):
        self.args = args
        self.student = nn.Conv2d(3, 19, 1).cuda()
        if args.distributed:
            self.student = DDP(self.student, device_ids=[args.local_rank])
        self.best = 0.0

    def validate(self, score):
        args = self.args
        is_best = score > self.best
        self.best = max(score, self.best)
        if (args.distributed is not True) or (args.distributed and args.local_rank == 0):
            save_student(self.student, args, is_best)
        if args.distributed:
            dist.barrier()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--save_dir", default="ckpt")
    parser.add_argument("--student", default="psp_r18")
    parser.add_argument("--dataset", default="citys")
    args = parser.parse_args()
    args.local_rank = int(os.environ.get("LOCAL_RANK", 0))
    args.distributed = int(os.environ.get("WORLD_SIZE", 1)) > 1
    if args.distributed:
        torch.cuda.set_device(args.local_rank)
        dist.init_process_group("nccl")
    distiller = Distiller(args)
    for epoch in range(10):
        distiller.validate(float(epoch))


if __name__ == "__main__":
    main()
