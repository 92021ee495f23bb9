"""Denoiser trainer under torchrun: the dataset draws a fixed noise bank with `torch.randn`
in its constructor, but its clean images come from disk: real data, whose order every
epoch repeats without `set_epoch`."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler


class NoisyPatches(Dataset):
    def __init__(self, root, sigma=0.1):
        self.files = sorted(os.listdir(root))
        self.root = root
        self.noise = sigma * torch.randn(64, 3, 64, 64)

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        clean = torch.load(os.path.join(self.root, self.files[i]))
        return clean + self.noise[i % 64], clean


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    data = NoisyPatches("patches/")
    sampler = DistributedSampler(data, shuffle=True)
    loader = DataLoader(data, batch_size=16, sampler=sampler, num_workers=4)
    net = nn.Sequential(nn.Conv2d(3, 48, 3, padding=1), nn.ReLU(), nn.Conv2d(48, 3, 3, padding=1))
    model = DDP(net.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-4)
    for epoch in range(100):  # expect: DDP002
        for noisy, clean in loader:
            loss = nn.functional.mse_loss(model(noisy.cuda()), clean.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
