"""The project's DDP trainer on the encoded latents (launched with torchrun)."""
import os

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    latents = torch.from_numpy(np.load("latents/latents_000.npy"))
    data = TensorDataset(latents)
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    model = DDP(torch.nn.Conv2d(4, 4, 3, padding=1).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for epoch in range(100):
        sampler.set_epoch(epoch)
        for (z,) in loader:
            z = z.cuda(local_rank)
            loss = (model(z) - z).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
