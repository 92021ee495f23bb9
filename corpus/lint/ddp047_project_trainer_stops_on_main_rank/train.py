"""torchrun --nproc_per_node=8 train.py"""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from engine.trainer import Trainer


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    features = TensorDataset(torch.randn(20000, 64), torch.randint(0, 10, (20000,)))
    loader = DataLoader(features, batch_size=128, sampler=DistributedSampler(features), drop_last=True)
    model = DDP(torch.nn.Linear(64, 10).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    Trainer(model, optimizer, loader, patience=5).fit(200)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
