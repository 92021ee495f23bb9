"""torchrun --nproc_per_node=8 pretrain.py"""

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

from engine import train_one_epoch


class ScaledBackward:
    def __init__(self) -> None:
        self.scaler = torch.cuda.amp.GradScaler()

    def __call__(self, loss, optimizer, parameters):
        self.scaler.scale(loss).backward()
        self.scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(parameters, 1.0)
        self.scaler.step(optimizer)
        self.scaler.update()


def main() -> None:
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dataset = torch.load("recordings.pt")
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=64, sampler=sampler)
    model = DDP(torch.nn.Linear(512, 512).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    scaler = ScaledBackward()
    for epoch in range(100):
        sampler.set_epoch(epoch)
        train_one_epoch(model, loader, optimizer, scaler, torch.device("cuda"))


if __name__ == "__main__":
    main()
