"""A conditional denoiser trained on scan/photo pairs. Every rank seeds torch with the
same value, but the data pipeline only resizes and normalises what it reads: the random
images the dataset makes when its folders are missing are a smoke-test stand-in, not an
augmentation of the real samples, so nothing random repeats across ranks in training."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler

from data.pairs import PrintPairs


def main(args):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    torch.manual_seed(args.seed)
    dataset = PrintPairs(args.data_root)
    sampler = DistributedSampler(dataset, shuffle=True, drop_last=True)
    loader = DataLoader(dataset, batch_size=16, sampler=sampler, num_workers=4, pin_memory=True)
    net = nn.Sequential(nn.Conv2d(2, 32, 3, padding=1), nn.SiLU(), nn.Conv2d(32, 1, 3, padding=1))
    model = DistributedDataParallel(net.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-4)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for scan, photo in loader:
            scan, photo = scan.cuda(), photo.cuda()
            loss = nn.functional.mse_loss(model(torch.cat([scan, photo], 1)), photo)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-root", default="data/pairs")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--epochs", type=int, default=50)
    main(parser.parse_args())
