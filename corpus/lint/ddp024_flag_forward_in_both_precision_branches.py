"""Segmentation training with gradient accumulation and an optional bf16 autocast.

Both branches of the precision switch run the DDP model's forward, so every backward
all-reduces, while the optimizer steps once per `--accum` micro-batches: the other
micro-steps belong under `model.no_sync()`.
"""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bf16", action="store_true")
    parser.add_argument("--accum", type=int, default=8)
    args = parser.parse_args()

    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)

    net = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 21, 1))
    model = DDP(net.to(device), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    data = TensorDataset(torch.randn(1024, 3, 64, 64), torch.randint(0, 21, (1024, 64, 64)))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=8, sampler=sampler, num_workers=2)

    for epoch in range(10):
        sampler.set_epoch(epoch)
        for it, (image, mask) in enumerate(loader):
            image, mask = image.to(device), mask.to(device)
            if args.bf16:
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits = model(image)
            else:
                logits = model(image)
            loss = F.cross_entropy(logits.float(), mask) / args.accum
            loss.backward()  # expect: DDP024
            if (it + 1) % args.accum == 0:
                optimizer.step()
                optimizer.zero_grad()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
