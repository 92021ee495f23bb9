"""Detector training that keeps the first error, writes an emergency checkpoint on rank 0
and raises it afterwards."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    dataset = torch.load("boxes.pt")
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, batch_size=4, sampler=sampler, collate_fn=dataset.collate)
    detector = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 85, 1))
    model = DDP(detector.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    failure = None
    try:
        for epoch in range(24):
            sampler.set_epoch(epoch)
            for images, targets in loader:
                loss = (model(images.cuda()) - targets.cuda()).abs().mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
    except Exception as err:
        failure = err
    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), "emergency.pt")
    if failure is not None:
        raise RuntimeError("training failed; emergency checkpoint written") from failure
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
