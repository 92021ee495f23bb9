"""A caption dataset over a JSON manifest and a batch sampler grouping clips of similar
length."""
import json
import random

import torch
from torch.utils.data import Dataset, Sampler


class CaptionClips(Dataset):
    def __init__(self, manifest, sample_rate):
        with open(manifest) as f:
            self.items = json.load(f)
        self.sample_rate = sample_rate
        self.durations = [item["seconds"] for item in self.items]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        item = self.items[i]
        wave = torch.zeros(int(item["seconds"] * self.sample_rate))
        return wave, item["caption"]


class LengthBuckets(Sampler):
    def __init__(self, durations, batch):
        self.order = sorted(range(len(durations)), key=durations.__getitem__)
        self.batch = batch

    def __iter__(self):
        batches = [self.order[i : i + self.batch] for i in range(0, len(self.order), self.batch)]
        random.shuffle(batches)
        return iter(batches)

    def __len__(self):
        return (len(self.order) + self.batch - 1) // self.batch
