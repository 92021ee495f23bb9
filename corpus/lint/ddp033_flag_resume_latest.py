"""Segmentation trainer under torchrun: rank 0 writes `latest.pth` from the GPU model each
epoch; on restart every rank reads it back without `map_location`."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--save-path", default="runs/seg")
    parser.add_argument("--epochs", type=int, default=40)
    return parser.parse_args()


def main():
    args = parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    rank = dist.get_rank()

    net = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 4, 1)).cuda()
    model = DDP(net, device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    start_epoch = 0
    latest = os.path.join(args.save_path, "latest.pth")
    if os.path.exists(latest):
        checkpoint = torch.load(latest)  # expect: DDP033
        model.module.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        start_epoch = checkpoint["epoch"] + 1

    images = torch.randn(512, 3, 32, 32)
    masks = torch.randint(0, 4, (512, 32, 32))
    dataset = TensorDataset(images, masks)
    sampler = DistributedSampler(dataset, shuffle=True, drop_last=True)
    loader = DataLoader(dataset, batch_size=8, sampler=sampler, drop_last=True)

    for epoch in range(start_epoch, args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if rank == 0:
            os.makedirs(args.save_path, exist_ok=True)
            state = {
                "model": model.module.state_dict(),
                "optimizer": optimizer.state_dict(),
                "epoch": epoch,
            }
            torch.save(state, os.path.join(args.save_path, "latest.tmp"))
            os.replace(os.path.join(args.save_path, "latest.tmp"), latest)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
