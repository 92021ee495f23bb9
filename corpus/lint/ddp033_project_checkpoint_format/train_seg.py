"""Resumes a segmentation run from `--resume` on every rank: the file is one of the
checkpoints `engine/checkpointing.py` writes from the GPU model, in its format."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from engine.loop import fit


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--resume", default="")
    parser.add_argument("--epochs", type=int, default=120)
    parser.add_argument("--out", default="runs/seg")
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    dataset = TensorDataset(torch.randn(512, 3, 64, 64), torch.randint(0, 4, (512, 64, 64)))
    sampler = DistributedSampler(dataset, shuffle=True, drop_last=True)
    loader = DataLoader(dataset, batch_size=8, sampler=sampler, num_workers=4)
    net = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 4, 1)).cuda()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 30)
    start_epoch = 0
    if args.resume and os.path.isfile(args.resume):
        resume_state = torch.load(args.resume)  # expect: DDP033
        net.load_state_dict(resume_state["state_dict"])
        optimizer.load_state_dict(resume_state["optimizer"])
        scheduler.load_state_dict(resume_state["lr_scheduler"])
        start_epoch = resume_state["epoch"] + 1
    model = DDP(net, device_ids=[local_rank])
    fit(model, loader, sampler, optimizer, scheduler, nn.CrossEntropyLoss(), start_epoch,
        args.epochs, args.out)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
