"""Knowledge distillation in the style of the ImageNet example: the project's commands
(cifar.sh) pass --seed and run one process on one GPU; the spawn of one worker per GPU
needs --multiprocessing-distributed, which none of them passes, so the seed set in the
parent reaches the one process that trains."""
import argparse
import random

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

parser = argparse.ArgumentParser(description="distillation")
parser.add_argument("data", metavar="DIR")
parser.add_argument("--epochs", default=240, type=int)
parser.add_argument("--gpu", default=None, type=int)
parser.add_argument("--seed", default=None, type=int)
parser.add_argument("--dist-url", default="tcp://localhost:23456", type=str)
parser.add_argument("--multiprocessing-distributed", action="store_true")


def main_worker(gpu, ngpus, args):
    if args.multiprocessing_distributed:
        dist.init_process_group("nccl", init_method=args.dist_url, world_size=ngpus, rank=gpu)
    torch.cuda.set_device(gpu)
    teacher = nn.Linear(512, 100).cuda(gpu).eval()
    student = nn.Linear(512, 100).cuda(gpu)
    if args.multiprocessing_distributed:
        student = DDP(student, device_ids=[gpu])
    optimizer = torch.optim.SGD(student.parameters(), lr=0.05, momentum=0.9)
    for _ in range(args.epochs):
        x = torch.randn(64, 512, device=gpu)
        with torch.no_grad():
            target = F.softmax(teacher(x) / 4.0, dim=1)
        loss = F.kl_div(F.log_softmax(student(x) / 4.0, dim=1), target, reduction="batchmean")
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main():
    args = parser.parse_args()
    if args.seed is not None:
        random.seed(args.seed)  # expect-preview: DDP041
        torch.manual_seed(args.seed)
    ngpus = torch.cuda.device_count()
    if args.multiprocessing_distributed:
        mp.spawn(main_worker, nprocs=ngpus, args=(ngpus, args))
    else:
        main_worker(args.gpu, ngpus, args)


if __name__ == "__main__":
    main()
