"""Datasets of a pretraining project: the masked-token task draws its masks at random, the
probing task reads its samples as they are."""
import random

import torch
from torch.utils.data import Dataset


class MaskedTokens(Dataset):
    def __init__(self, sequences, mask_prob=0.15):
        self.sequences, self.mask_prob = sequences, mask_prob

    def __len__(self):
        return len(self.sequences)

    def __getitem__(self, i):
        tokens = self.sequences[i].clone()
        labels = torch.full_like(tokens, -100)
        for j in range(len(tokens)):
            if random.random() < self.mask_prob:
                labels[j], tokens[j] = tokens[j], 0
        return tokens, labels


class Probe(Dataset):
    def __init__(self, features, targets):
        self.features, self.targets = features, targets

    def __len__(self):
        return len(self.features)

    def __getitem__(self, i):
        return self.features[i], self.targets[i]
