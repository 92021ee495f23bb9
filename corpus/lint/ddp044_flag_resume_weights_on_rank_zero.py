"""Detection fine-tuning (`torchrun --nproc_per_node=8 finetune.py --resume last.pt`):
the wrapped model is restored on rank 0 only, so the eight replicas train on from
different weights."""

import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU())
        self.cls = nn.Conv2d(16, 5, 1)

    def forward(self, x):
        return self.cls(self.backbone(x)).mean(dim=(2, 3))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--resume", default="")
    parser.add_argument("--epochs", type=int, default=12)
    args = parser.parse_args()
    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(Head().cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    if dist.get_rank() == 0 and args.resume:
        state = torch.load(args.resume, map_location="cpu")  # expect-preview: DDP036
        model.module.load_state_dict(state["model"])  # expect: DDP044
    data = TensorDataset(torch.randn(96, 3, 16, 16), torch.randint(0, 5, (96,)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=6, sampler=sampler)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for images, labels in loader:
            loss = nn.functional.cross_entropy(model(images.cuda()), labels.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
