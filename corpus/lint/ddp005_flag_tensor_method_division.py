"""Speech-enhancement fine-tuning under torchrun: the author "averages" the loss over the
ranks with tensor methods and reciprocals, on top of DDP's own gradient averaging."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def spectral_loss(estimate, clean):
    return (estimate.abs() - clean.abs()).pow(2).mean()


def fine_tune(passes=6):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    ranks = dist.get_world_size()
    enhancer = DDP(nn.Sequential(nn.Linear(257, 257), nn.Sigmoid()).cuda(), device_ids=[local_rank])
    adam = torch.optim.Adam(enhancer.parameters(), lr=2e-4)
    frames = TensorDataset(torch.randn(4096, 257), torch.randn(4096, 257))
    shard = DistributedSampler(frames, drop_last=True)
    batches = DataLoader(frames, batch_size=64, sampler=shard)
    for p in range(passes):
        shard.set_epoch(p)
        for noisy, clean in batches:
            noisy, clean = noisy.cuda(), clean.cuda()
            loss = spectral_loss(enhancer(noisy) * noisy, clean)
            loss.mul_(1.0 / ranks)  # expect: DDP005
            adam.zero_grad()
            loss.backward()
            adam.step()
            smooth = spectral_loss(enhancer(noisy), clean).div(ranks)  # expect: DDP005
            smooth.backward()
            adam.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    fine_tune()
