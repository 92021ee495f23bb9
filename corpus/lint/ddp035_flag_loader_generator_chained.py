"""Point-cloud segmentation: the training loader is handed `torch.Generator().manual_seed(0)`
on every rank, and the dataset jitters and rotates each cloud at random."""
import math
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class Clouds(Dataset):
    def __init__(self, points, labels):
        self.points = points
        self.labels = labels

    def __len__(self):
        return len(self.points)

    def __getitem__(self, index):
        cloud = self.points[index]
        angle = torch.rand(1).item() * 2 * math.pi
        c, s = math.cos(angle), math.sin(angle)
        rotation = torch.tensor([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
        cloud = cloud @ rotation.T + 0.01 * torch.randn_like(cloud)
        return cloud, self.labels[index]


def main(points, labels, epochs=100):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    train_set = Clouds(points, labels)
    sampler = DistributedSampler(train_set)
    loader = DataLoader(
        train_set,
        batch_size=16,
        sampler=sampler,
        num_workers=6,
        generator=torch.Generator().manual_seed(0),  # expect: DDP035
    )
    model = DDP(nn.Conv1d(3, 13, 1).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for cloud, label in loader:
            logits = model(cloud.transpose(1, 2).cuda())
            loss = nn.functional.cross_entropy(logits, label.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
