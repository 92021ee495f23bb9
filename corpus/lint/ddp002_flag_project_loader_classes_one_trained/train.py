"""Train a depth network on the mixed datasets (torchrun --nproc_per_node=8 train.py).

The single-dataset module's training split is never trained on: only the evaluation
script uses that class, for validation. Its sampler's finding rests on a loop nothing
shows reads it, so it is shown under preview only; the mixed module's is proven.
"""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

from depthkit.data import MixedDepthData
from depthkit.trainer import Trainer


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    net = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 1, 1))
    model = DDP(net.cuda(), device_ids=[local_rank])
    data = MixedDepthData(batch_size=16)
    data.setup("train")
    Trainer(model, torch.optim.Adam(model.parameters(), lr=1e-4)).fit(data)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
