"""Transform classes that draw from a generator of their own, seeded per sample, and
a deterministic normalisation: nothing here draws from the process's generators."""
import numpy as np
import torch
from torch.utils.data import Dataset


class SeededFlip:
    def __call__(self, volume, index):
        rng = np.random.default_rng(index)
        return np.flip(volume, 0) if rng.random() < 0.5 else volume


class Normalise:
    def __call__(self, volume):
        return (volume - volume.mean()) / (volume.std() + 1e-6)


class PatchSet(Dataset):
    def __init__(self, volumes):
        self.volumes = volumes
        self.flip = SeededFlip()
        self.norm = Normalise()

    def __len__(self):
        return len(self.volumes)

    def __getitem__(self, index):
        patch = self.norm(self.flip(self.volumes[index], index))
        return torch.from_numpy(np.ascontiguousarray(patch)).float()
