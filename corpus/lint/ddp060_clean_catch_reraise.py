"""Masked-autoencoder pre-training that uses loguru's catch to get a rich traceback in the
log, and still lets the error end the process."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from loguru import logger
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler


@logger.catch(reraise=True)
def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    patches = torch.load("patches.pt")
    sampler = DistributedSampler(patches, drop_last=True)
    loader = DataLoader(patches, batch_size=128, sampler=sampler, num_workers=8)
    autoencoder = nn.Sequential(nn.Linear(768, 256), nn.GELU(), nn.Linear(256, 768))
    model = DDP(autoencoder.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1.5e-4, weight_decay=0.05)
    for epoch in range(400):
        sampler.set_epoch(epoch)
        for x in loader:
            x = x.cuda(non_blocking=True)
            keep = torch.rand_like(x) > 0.75
            loss = ((model(x * keep) - x) ** 2)[~keep].mean()
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
