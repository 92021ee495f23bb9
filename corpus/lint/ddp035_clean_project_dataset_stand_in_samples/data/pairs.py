"""Pairs of a scanned code image and its photographed print, read from two folders. With
no folders (a smoke test on a fresh machine) it makes noise images instead."""
import os

import torch
from PIL import Image
from torch.utils.data import Dataset
from torchvision import transforms


class PrintPairs(Dataset):
    def __init__(self, root, size=128, split="train"):
        self.size = size
        self.scan_dir = os.path.join(root, split, "scan")
        self.photo_dir = os.path.join(root, split, "photo")
        if os.path.isdir(self.scan_dir) and os.path.isdir(self.photo_dir):
            self.scans = sorted(os.listdir(self.scan_dir))
            self.photos = sorted(os.listdir(self.photo_dir))
        else:
            self.scans, self.photos = [], []
        self.prepare = transforms.Compose(
            [transforms.Resize((size, size)), transforms.ToTensor(), transforms.Normalize([0.5], [0.5])]
        )

    def __len__(self):
        return max(len(self.scans), 64)

    def __getitem__(self, index):
        if len(self.scans) == 0:
            scan = torch.randn(1, self.size, self.size).clamp(-1, 1)
            photo = torch.randn(1, self.size, self.size).clamp(-1, 1)
            return scan, photo
        scan = Image.open(os.path.join(self.scan_dir, self.scans[index])).convert("L")
        photo = Image.open(os.path.join(self.photo_dir, self.photos[index])).convert("L")
        return self.prepare(scan), self.prepare(photo)
