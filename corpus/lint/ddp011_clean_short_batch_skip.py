"""BatchNorm cannot train on a batch of one: the short last batch is skipped on every rank alike."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

from leaves import LeafImages


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    net = nn.Sequential(
        nn.Conv2d(3, 32, 3), nn.BatchNorm2d(32), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 5)
    )
    net = nn.SyncBatchNorm.convert_sync_batchnorm(net)
    model = DDP(net.to(device), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    leaves = LeafImages("leaves/")
    sampler = DistributedSampler(leaves, shuffle=True)
    loader = DataLoader(leaves, batch_size=32, sampler=sampler, num_workers=4)
    for epoch in range(20):
        sampler.set_epoch(epoch)
        for step, (images, labels) in enumerate(loader):
            if images.size(0) < 2 and step > 0:
                continue
            images, labels = images.to(device), labels.to(device)
            loss = nn.functional.cross_entropy(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
