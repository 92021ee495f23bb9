"""Temporal action detection trainer: the checkpoint holds the optimizer, the resume
reads everything but it."""

import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from detector import ActionDetector, VideoClips, detection_loss


def parse():
    parser = argparse.ArgumentParser()
    parser.add_argument("--resume", default="")
    parser.add_argument("--epochs", type=int, default=40)
    parser.add_argument("--out", default="work_dirs/detector")
    return parser.parse_args()


def main():
    args = parse()
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    detector = ActionDetector().cuda()
    model = DDP(detector, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-4, weight_decay=1e-4)
    clips = VideoClips("data/charades", split="train")
    sampler = DistributedSampler(clips)
    loader = DataLoader(clips, batch_size=8, sampler=sampler, num_workers=6)
    start_epoch = 0
    if args.resume:
        checkpoint = torch.load(args.resume, map_location="cpu")  # expect: DDP036
        detector.load_state_dict(checkpoint["model"])
        start_epoch = checkpoint["epoch"] + 1
    for epoch in range(start_epoch, args.epochs):
        sampler.set_epoch(epoch)
        for clip, targets in loader:
            loss = detection_loss(model(clip.cuda()), targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            state = {
                "model": detector.state_dict(),
                "optimizer": optimizer.state_dict(),
                "epoch": epoch,
            }
            torch.save(state, f"{args.out}/epoch_{epoch:03d}.pth")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
