"""Prompt data and the frozen scorer shared by the search and the scorer's training."""
import json

import torch
from torch.utils.data import Dataset


class PromptSet(Dataset):
    def __init__(self, path):
        with open(path) as f:
            self.rows = [json.loads(line)["text"] for line in f]

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        return self.rows[i]


def featurize(texts, dim=256):
    out = torch.zeros(len(texts), dim)
    for row, text in enumerate(texts):
        for word in text.split():
            out[row, hash(word) % dim] += 1.0
    return out


def load_scorer(path, device="cpu"):
    head = torch.nn.Linear(256, 1)
    head.load_state_dict(torch.load(path, map_location="cpu"))
    head.to(device).eval()

    @torch.no_grad()
    def score(texts):
        return head(featurize(texts).to(device)).squeeze(-1).cpu()

    return score
