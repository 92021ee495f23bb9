"""Cell-counting trainer with albumentations augmentations and loaders without workers:
`torch.manual_seed(0)` on every rank does not reach the flips and colour jitter, which
albumentations draws from Python's and NumPy's generators in the main process, and each
spawned process seeds those from the operating system."""
import os

import albumentations as A
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from albumentations.pytorch import ToTensorV2
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

from counting_data import DensityMaps
from counting_model import DensityNet


def worker(rank, world_size, data_dir, epochs):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29541")
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    torch.cuda.set_device(rank)
    torch.manual_seed(0)
    augment = A.Compose(
        [A.HorizontalFlip(p=0.5), A.VerticalFlip(p=0.5), A.ColorJitter(p=0.8), ToTensorV2()]
    )
    train_set = DensityMaps(data_dir, "train", augment)
    sampler = DistributedSampler(train_set)
    loader = DataLoader(train_set, batch_size=4, sampler=sampler, num_workers=0)
    model = DDP(DensityNet().cuda(rank), device_ids=[rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for images, density in loader:
            loss = torch.nn.functional.mse_loss(model(images.cuda(rank)), density.cuda(rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    gpus = torch.cuda.device_count()
    mp.spawn(worker, args=(gpus, "data/lysto", 100), nprocs=gpus)
