"""torchrun --nproc_per_node=8 train.py --resume runs/last.pth.tar"""
import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from utils.tracking import CheckpointKeeper, RunningMean


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--resume", default="")
    parser.add_argument("--epochs", type=int, default=90)
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    images = TensorDataset(torch.randn(50000, 3, 32, 32), torch.randint(0, 100, (50000,)))
    sampler = DistributedSampler(images)
    loader = DataLoader(images, batch_size=128, sampler=sampler, num_workers=8, drop_last=True)
    model = DDP(torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3072, 100)).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    start_epoch = 0
    if args.resume:
        state = torch.load(args.resume, map_location="cpu")
        model.module.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        start_epoch = state["epoch"] + 1
    keeper = CheckpointKeeper(model, optimizer, "runs")
    for epoch in range(start_epoch, args.epochs):
        sampler.set_epoch(epoch)
        loss_meter = RunningMean(reduce_across_ranks=True)
        for inputs, targets in loader:
            inputs, targets = inputs.cuda(non_blocking=True), targets.cuda(non_blocking=True)
            loss = torch.nn.functional.cross_entropy(model(inputs), targets)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            loss_meter.update(loss.item(), inputs.size(0))
        keeper.update(epoch, -loss_meter.mean)  # expect: DDP014
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
