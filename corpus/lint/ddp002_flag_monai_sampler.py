"""Self-supervised pretraining of a 3D encoder on MONAI: MONAI's DistributedSampler is
torch's with an `even_divisible` switch, and like torch's it reshuffles only when told
the epoch. The epoch loop never tells it."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from monai.data import CacheDataset, DataLoader, DistributedSampler
from monai.transforms import Compose, LoadImaged, RandSpatialCropd, ScaleIntensityd
from torch.nn.parallel import DistributedDataParallel


def main():
    dist.init_process_group(backend="nccl", init_method="env://")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    files = [{"image": f"/data/brats/{i:04d}_t1.nii.gz"} for i in range(1200)]
    transforms = Compose(
        [LoadImaged(keys="image"), ScaleIntensityd(keys="image"),
         RandSpatialCropd(keys="image", roi_size=(96, 96, 96))]
    )
    dataset = CacheDataset(data=files, transform=transforms, cache_rate=0.5)
    sampler = DistributedSampler(dataset=dataset, even_divisible=True, shuffle=True)
    loader = DataLoader(dataset, batch_size=2, sampler=sampler, num_workers=8)
    encoder = nn.Sequential(nn.Conv3d(1, 16, 3, padding=1), nn.ReLU(), nn.Conv3d(16, 1, 1))
    model = DistributedDataParallel(encoder.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for epoch in range(300):  # expect: DDP002
        for batch in loader:
            volume = batch["image"].cuda()
            masked = volume * (torch.rand_like(volume) > 0.6)
            loss = nn.functional.mse_loss(model(masked), volume)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            torch.save(model.module.state_dict(), f"encoder_{epoch:03d}.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
