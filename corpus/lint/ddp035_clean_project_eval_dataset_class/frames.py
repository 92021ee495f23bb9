"""Frame-triplet datasets: the training one crops and flips at random through the
module's helper functions, the evaluation one reads the frames as they are."""
import random

import numpy as np
import torch
from torch.utils.data import Dataset


def random_crop(frames, size=224):
    height, width = frames.shape[1:3]
    top = np.random.randint(0, height - size + 1)
    left = np.random.randint(0, width - size + 1)
    return frames[:, top : top + size, left : left + size]


def random_flip(frames, p=0.5):
    if random.uniform(0, 1) < p:
        return frames[:, :, ::-1]
    return frames


class TripletTrainSet(Dataset):
    def __init__(self, clips):
        self.clips = clips

    def __len__(self):
        return len(self.clips)

    def __getitem__(self, idx):
        frames = random_flip(random_crop(self.clips[idx]))
        return torch.from_numpy(np.ascontiguousarray(frames)).float()


class TripletTestSet(Dataset):
    def __init__(self, clips):
        self.clips = clips

    def __len__(self):
        return len(self.clips)

    def __getitem__(self, idx):
        return torch.from_numpy(self.clips[idx]).float()
