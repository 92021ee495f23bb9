"""Brain-volume patches: hand-written transform classes (no torchvision) whose
`__call__` flips and shifts at random, composed into the training transform."""
import random

import numpy as np
import torch
from torch.utils.data import Dataset


class FlipAxes:
    def __call__(self, volume):
        for axis in range(3):
            if random.random() < 0.5:
                volume = np.flip(volume, axis)
        return volume


class IntensityShift:
    def __init__(self, spread=0.1):
        self.spread = spread

    def __call__(self, volume):
        return volume + np.random.uniform(-self.spread, self.spread)


class Chain:
    def __init__(self, steps):
        self.steps = steps

    def __call__(self, volume):
        for step in self.steps:
            volume = step(volume)
        return volume


class PatchSet(Dataset):
    def __init__(self, volumes):
        self.volumes = volumes
        self.augment = Chain([FlipAxes(), IntensityShift(0.2)])

    def __len__(self):
        return len(self.volumes)

    def __getitem__(self, index):
        patch = self.augment(self.volumes[index])
        return torch.from_numpy(np.ascontiguousarray(patch)).float()
