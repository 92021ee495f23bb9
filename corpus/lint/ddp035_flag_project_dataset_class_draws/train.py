"""Every rank seeds torch with the same constant, and the sharded loader's dataset class
(defined in frames.py) crops and flips at random: each rank's workers start from the same
base seed and draw the same crops for the samples at the same positions."""
import os
import random

import numpy as np
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

from frames import TripletTrainSet


def train(model, clips, local_rank, epochs):
    train_set = TripletTrainSet(clips)
    sampler = DistributedSampler(train_set, shuffle=True, drop_last=True)
    loader = DataLoader(train_set, batch_size=8, sampler=sampler, num_workers=4)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for frames in loader:
            frames = frames.cuda(local_rank, non_blocking=True)
            loss = nn.functional.l1_loss(model(frames[:, 0]), frames[:, 1])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    seed = 1234
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)  # expect: DDP035
    net = DDP(nn.Conv2d(3, 3, 3, padding=1).cuda(local_rank), device_ids=[local_rank])
    clips = [np.zeros((3, 256, 256, 3), dtype=np.uint8) for _ in range(64)]
    train(net, clips, local_rank, epochs=100)
    dist.destroy_process_group()
