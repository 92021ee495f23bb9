"""A handwriting-generation trainer whose seeding helper seeds `random`, NumPy and the CUDA
generators, and torch's CPU generator only on a machine without CUDA. On the GPUs this job
runs on, each rank's DataLoader draws its workers' base seed from an unseeded CPU generator:
the ranks' augmentations differ, as they should."""
import os
import random

import numpy as np
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, Dataset, DistributedSampler
from torchvision import transforms


def fix_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.backends.cudnn.deterministic = True
    if torch.cuda.device_count() > 0 and torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
    else:
        torch.manual_seed(seed)


class Glyphs(Dataset):
    def __init__(self, root):
        self.images = torch.load(os.path.join(root, "glyphs.pt"))
        self.augment = transforms.Compose([transforms.RandomAffine(5), transforms.RandomErasing()])

    def __len__(self):
        return len(self.images)

    def __getitem__(self, index):
        return self.augment(self.images[index])


def main():
    fix_seed(1234)
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dataset = Glyphs("data")
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=16, sampler=sampler, num_workers=8)
    model = DistributedDataParallel(nn.Conv2d(1, 8, 3).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for epoch in range(100):
        sampler.set_epoch(epoch)
        for images in loader:
            loss = model(images.cuda()).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
