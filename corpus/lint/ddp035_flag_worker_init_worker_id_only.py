"""Text-detection style loader: each worker re-seeds NumPy with its index alone, so worker
k of every rank crops and rotates the same way for the samples at the same positions, and
again every epoch (the workers are started afresh)."""
import os

import numpy as np
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import BatchSampler, DataLoader, Dataset, DistributedSampler


def seed_worker(worker_id):
    np.random.seed(worker_id)  # expect: DDP035


class RandomCropText(Dataset):
    def __init__(self, images, size=640):
        self.images = images
        self.size = size

    def __len__(self):
        return len(self.images)

    def __getitem__(self, idx):
        image = self.images[idx]
        top = np.random.randint(0, image.shape[1] - self.size + 1)
        left = np.random.randint(0, image.shape[2] - self.size + 1)
        crop = image[:, top : top + self.size, left : left + self.size]
        return torch.from_numpy(np.rot90(crop, k=np.random.randint(4), axes=(1, 2)).copy())


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    images = [np.zeros((3, 720, 960), dtype=np.float32) for _ in range(256)]
    data = RandomCropText(images)
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    batches = BatchSampler(sampler, batch_size=8, drop_last=True)
    loader = DataLoader(data, batch_sampler=batches, num_workers=8, worker_init_fn=seed_worker)
    model = DDP(nn.Conv2d(3, 1, 3, padding=1).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.007, momentum=0.9)
    for epoch in range(1200):
        sampler.set_epoch(epoch)
        for crops in loader:
            loss = model(crops.cuda(local_rank)).abs().mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
