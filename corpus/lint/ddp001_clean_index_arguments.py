"""Detection-style script: devices passed around as (type, index) pairs."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def describe(tensor):
    # Logging only: compares the device name, does not choose it.
    on_first = str(tensor.device) == "cuda:0"
    return f"{tuple(tensor.shape)} on {'cuda:0' if on_first else tensor.device}"


def to_device(batch, device):
    return [t.to(device, non_blocking=True) for t in batch]


def main(epochs=2):
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)
    dist.init_process_group("nccl")
    backbone = nn.Sequential(nn.Conv2d(3, 16, 3), nn.AdaptiveAvgPool2d(1), nn.Flatten())
    model = nn.Sequential(backbone, nn.Linear(16, 4)).cuda(local_rank)
    model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    data = TensorDataset(torch.randn(256, 3, 24, 24), torch.randint(0, 4, (256,)))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    cpu_stats = torch.zeros(2, device="cpu")
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for images, targets in loader:
            images, targets = to_device((images, targets), device)
            loss = nn.functional.cross_entropy(model(images), targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            cpu_stats += torch.tensor([loss.item(), 1.0])
        if dist.get_rank() == 0:
            print(describe(images), cpu_stats)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
