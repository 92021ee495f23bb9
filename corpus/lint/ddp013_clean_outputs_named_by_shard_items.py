"""Offline soft-label generation: each rank runs the teacher over its own DistributedSampler
share of the images and saves one file per image, named after the image. No two ranks
write the same file."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class ImageList(Dataset):
    def __init__(self, root):
        self.files = sorted(os.listdir(root))

    def __len__(self):
        return len(self.files)

    def __getitem__(self, index):
        return torch.randn(3, 224, 224), self.files[index]


def label_images(loader, teacher, out_dir):
    teacher.eval()
    for step, (images, names) in enumerate(loader):
        with torch.no_grad():
            probs = torch.softmax(teacher(images.cuda()), dim=1).cpu()
        for k in range(images.size(0)):
            stem = os.path.splitext(names[k])[0]
            torch.save({"probs": probs[k]}, os.path.join(out_dir, stem + ".tar"))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="train")
    parser.add_argument("--out", default="soft_labels")
    args = parser.parse_args()
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    teacher = nn.Sequential(nn.Flatten(), nn.Linear(3 * 224 * 224, 1000)).cuda()
    dataset = ImageList(args.data)
    sampler = DistributedSampler(dataset, shuffle=False)
    loader = DataLoader(dataset, batch_size=64, sampler=sampler, num_workers=4)
    os.makedirs(args.out, exist_ok=True)
    label_images(loader, teacher, args.out)


if __name__ == "__main__":
    main()
