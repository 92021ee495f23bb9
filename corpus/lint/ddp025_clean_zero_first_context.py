"""YOLO-style `torch_distributed_zero_first` around the downloads and hub loads."""
import os
from contextlib import contextmanager

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler
from torchvision.datasets import FashionMNIST
from torchvision.transforms import ToTensor
from transformers import AutoModel


@contextmanager
def torch_distributed_zero_first(local_rank):
    if local_rank not in (-1, 0):
        dist.barrier(device_ids=[local_rank])
    yield
    if local_rank == 0:
        dist.barrier(device_ids=[local_rank])


class Head(nn.Module):
    def __init__(self, backbone):
        super().__init__()
        self.backbone = backbone
        self.fc = nn.Linear(backbone.config.hidden_size, 10)

    def forward(self, pixels):
        return self.fc(self.backbone(pixel_values=pixels).pooler_output)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)

    with torch_distributed_zero_first(local_rank):
        data = FashionMNIST("./data", train=True, download=True, transform=ToTensor())
        backbone = AutoModel.from_pretrained("google/vit-base-patch16-224-in21k")

    model = DDP(Head(backbone).to(device), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    for epoch in range(2):
        sampler.set_epoch(epoch)
        for x, y in loader:
            pixels = x.repeat(1, 3, 8, 8).to(device)
            loss = nn.functional.cross_entropy(model(pixels), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
