"""Architecture-search retraining that rewrites two files each epoch: the resume state a
restart reads with --resume-path (model, optimizer, scheduler, epoch), and a plain weights
file for the evaluation scripts, which no resume reads: only the first costs the run."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="runs/retrain")
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--resume-path", default="")
    parser.add_argument("--epochs", type=int, default=600)
    return parser.parse_args()


def main():
    args = parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    dataset = torch.load("cifar_train.pt")
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, batch_size=96, sampler=sampler, num_workers=4)
    cell_net = nn.Sequential(nn.Conv2d(3, 36, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.LazyLinear(10))
    model = DDP(cell_net.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.025, momentum=0.9, weight_decay=3e-4)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, args.epochs)
    start_epoch = 0
    if args.resume:
        state = torch.load(args.resume_path, map_location="cpu")
        model.module.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        start_epoch = state["epoch"]
    for epoch in range(start_epoch, args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        scheduler.step()
        if dist.get_rank() == 0:
            state = {
                "model": model.module.state_dict(),
                "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(),
                "epoch": epoch + 1,
            }
            torch.save(state, os.path.join(args.out, "resume_checkpoint.pth"))  # expect: DDP014
            weights = model.module.state_dict()
            torch.save(weights, os.path.join(args.out, "checkpoint.pth"))  # expect-preview: DDP014
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
