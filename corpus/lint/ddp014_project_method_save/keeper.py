"""A checkpoint keeper object: saves and loads training state."""
import os

import torch


class Keeper:
    def __init__(self, out_dir):
        self.out_dir = out_dir
        os.makedirs(out_dir, exist_ok=True)

    def save(self, state, path):
        torch.save(state, path)

    def save_safely(self, state, path):
        torch.save(state, path + ".part")
        os.replace(path + ".part", path)

    def load(self, path):
        return torch.load(path, map_location="cpu")
