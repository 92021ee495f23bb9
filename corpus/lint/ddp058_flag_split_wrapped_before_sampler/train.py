"""A speech-command classifier splits its clips 80/20 with `random_split` and no generator
on every rank, wraps the training part in an augmenting dataset, and shards that: each rank
augments and shards its own split, and validates on clips other ranks train on."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler, random_split


class WithNoise(Dataset):
    def __init__(self, clips, scale=0.01):
        self.clips, self.scale = clips, scale

    def __len__(self):
        return len(self.clips)

    def __getitem__(self, index):
        wave, label = self.clips[index]
        return wave + self.scale * torch.randn_like(wave), label


def main(clips, net, epochs):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    train_part, val_part = random_split(clips, [0.8, 0.2])  # expect: DDP058
    train_set = WithNoise(train_part)
    sampler = DistributedSampler(train_set)
    loader = DataLoader(train_set, batch_size=64, sampler=sampler, num_workers=4)
    model = DDP(net.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-4)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for wave, label in loader:
            loss = torch.nn.functional.cross_entropy(model(wave.cuda()), label.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return val_part
