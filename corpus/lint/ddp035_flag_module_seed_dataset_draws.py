"""Audio denoiser: the seed is set once at import, and the dataset picks a random window
and gain in `__getitem__` (in 4 workers per rank)."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler

torch.manual_seed(2024)  # expect: DDP035


class NoisyClips(Dataset):
    def __init__(self, clips, window=16000):
        self.clips = clips
        self.window = window

    def __len__(self):
        return len(self.clips)

    def __getitem__(self, index):
        clip = self.clips[index]
        start = int(torch.randint(0, clip.numel() - self.window, ()))
        piece = clip[start:start + self.window]
        gain = torch.rand(()) * 0.5 + 0.75
        noise = torch.randn_like(piece) * 0.01
        return piece * gain + noise, piece


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    data = NoisyClips([torch.randn(48000) for _ in range(256)])
    sampler = DistributedSampler(data, drop_last=True)
    loader = DataLoader(data, batch_size=8, sampler=sampler, num_workers=4, drop_last=True)
    model = DDP(nn.Conv1d(1, 1, 9, padding=4).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-4)
    for epoch in range(10):
        sampler.set_epoch(epoch)
        for noisy, clean in loader:
            noisy, clean = noisy.cuda().unsqueeze(1), clean.cuda().unsqueeze(1)
            loss = nn.functional.l1_loss(model(noisy), clean)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
