"""Video diffusion training whose epoch and batch loops run inside `with tqdm(...)` bars."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset
from tqdm import tqdm


def main():
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    clips = TensorDataset(torch.randn(2048, 4, 8, 16, 16))
    sampler = DistributedSampler(clips, shuffle=True, seed=7)
    loader = DataLoader(clips, batch_size=8, sampler=sampler, num_workers=4, drop_last=True)
    denoiser = DDP(nn.Conv3d(4, 4, 3, padding=1).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(denoiser.parameters(), lr=2e-4)
    with tqdm(range(300), desc="epoch", disable=rank != 0) as epochs:
        for epoch in epochs:  # expect: DDP002
            with tqdm(loader, desc="batch", leave=False, disable=rank != 0) as batches:
                for (video,) in batches:
                    video = video.cuda(non_blocking=True)
                    noise = torch.randn_like(video)
                    loss = (denoiser(video + noise) - noise).pow(2).mean()
                    optimizer.zero_grad(set_to_none=True)
                    loss.backward()
                    optimizer.step()
                    batches.set_postfix(loss=loss.item())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
