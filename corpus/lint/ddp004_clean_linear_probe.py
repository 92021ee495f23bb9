"""Linear probe on a frozen backbone: only the head is trained with DDP."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main(epochs=10):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    backbone = nn.Sequential(nn.Linear(128, 256), nn.ReLU()).cuda(local_rank).eval()
    backbone.requires_grad_(False)
    head = nn.Linear(256, 10).cuda(local_rank)
    head = DDP(head, device_ids=[local_rank])
    optimizer = torch.optim.SGD(head.parameters(), lr=0.1, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)
    data = TensorDataset(torch.randn(2000, 128), torch.randint(0, 10, (2000,)))
    sampler = DistributedSampler(data, drop_last=True)
    loader = DataLoader(data, batch_size=100, sampler=sampler)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            with torch.no_grad():
                feats = backbone(x.cuda(local_rank))
            loss = nn.functional.cross_entropy(head(feats), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        scheduler.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
