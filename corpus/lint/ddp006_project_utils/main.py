"""Training entry point; checkpoints go through utils.save_on_master."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

import utils


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--output-dir", default="out")
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(nn.Linear(24, 6).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    data = TensorDataset(torch.randn(960, 24), torch.randint(0, 6, (960,)))
    sampler = DistributedSampler(data, drop_last=True)
    loader = DataLoader(data, batch_size=48, sampler=sampler)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        checkpoint = {"model": model.state_dict(), "optimizer": optimizer.state_dict()}
        utils.save_on_master(checkpoint, os.path.join(args.output_dir, "checkpoint.pth"))  # expect: DDP006
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
