"""Resume on the main rank only: rank 0 reads the start epoch from the checkpoint, the other
ranks start from 0, and the value is handed to the training function, whose epoch loop
then runs fewer passes on rank 0. The other ranks go on into an epoch rank 0 never
starts and wait in DDP's gradient all-reduce."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def train(model, optimizer, loader, sampler, first_epoch, last_epoch):
    for epoch in range(first_epoch, last_epoch):  # expect: DDP043
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--resume", default="")
    parser.add_argument("--epochs", type=int, default=50)
    args = parser.parse_args()
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    data = TensorDataset(torch.randn(2048, 16), torch.randn(2048, 1))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    model = DDP(nn.Linear(16, 1).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    if args.resume and local_rank == 0:
        checkpoint = torch.load(args.resume, map_location="cpu")
        model.module.load_state_dict(checkpoint["model"])  # expect: DDP044
        start_epoch = checkpoint["epoch"]
    else:
        start_epoch = 0
    train(model, optimizer, loader, sampler, start_epoch, args.epochs)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
