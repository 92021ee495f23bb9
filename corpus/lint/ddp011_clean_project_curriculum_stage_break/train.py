"""A progressive GAN-style trainer: each pass over the loader looks the stage up again by
the shared step counter and leaves the loader when the stage's batch size changes, to build
the next stage's loader. Every rank holds the same step, so every rank leaves together."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

import curriculum


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.LeakyReLU(0.2), nn.AdaptiveAvgPool2d(1))
        self.head = nn.Linear(32, 1)
        self.step = 0

    def forward(self, x):
        return self.head(self.net(x).flatten(1))


def build_loader(stage, epoch):
    data = TensorDataset(torch.randn(4096, 3, stage["img_size"], stage["img_size"]))
    sampler = DistributedSampler(data)
    sampler.set_epoch(epoch)
    return DataLoader(data, batch_size=stage["batch_size"], sampler=sampler, drop_last=True)


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    critic = Critic().cuda()
    model = DDP(critic, device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-4, betas=(0, 0.9))
    loader = None
    for epoch in range(200):
        stage = curriculum.stage_at(critic.step)
        if loader is None or loader.batch_size != stage["batch_size"]:
            loader = build_loader(stage, epoch)
        for (images,) in loader:
            stage = curriculum.stage_at(critic.step)
            if loader.batch_size != stage["batch_size"]:
                break
            for group in optimizer.param_groups:
                group["lr"] = stage["lr"]
            scores = model(images.cuda(non_blocking=True))
            loss = nn.functional.softplus(-scores).mean() + stage["drift"] * scores.pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            critic.step += 1
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
