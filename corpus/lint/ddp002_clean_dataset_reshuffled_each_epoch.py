"""LiDAR scan segmentation whose dataset reorders its own scan list at every epoch (the
same seed on every rank): the sampler's indices read other scans in each pass."""
import os
import random

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler


class ScanSequence(Dataset):
    def __init__(self, scans, seed=0):
        self.scans = list(scans)
        self.order = random.Random(seed)

    def shuffle(self):
        self.order.shuffle(self.scans)

    def __len__(self):
        return len(self.scans)

    def __getitem__(self, index):
        return torch.load(self.scans[index], map_location="cpu")


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    scans = ScanSequence(f"/data/kitti/{i:06d}.pt" for i in range(20000))
    sampler = DistributedSampler(scans)
    loader = DataLoader(scans, batch_size=8, sampler=sampler, num_workers=6)
    model = DDP(nn.Conv2d(5, 20, 3, padding=1).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for epoch in range(50):
        scans.shuffle()
        for projection, labels in loader:
            loss = nn.functional.cross_entropy(model(projection.cuda()), labels.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
