"""Options are merged into a config dictionary that the model factory of a library reads:
the switch may be read by name there."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

DEFAULTS = {"width": 32, "epochs": 10}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--syncbn", action="store_true")
    parser.add_argument("--width", type=int)
    args = parser.parse_args()
    cfg = {**DEFAULTS, **{k: v for k, v in vars(args).items() if v is not None}}
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = nn.Sequential(nn.Linear(12, cfg["width"]), nn.ReLU(), nn.Linear(cfg["width"], 2))
    model = DDP(model.cuda(local_rank), device_ids=[local_rank])
    data = TensorDataset(torch.randn(1200, 12), torch.randint(0, 2, (1200,)))
    sampler = DistributedSampler(data, drop_last=True)
    loader = DataLoader(data, batch_size=24, sampler=sampler)
    optimizer = torch.optim.Adam(model.parameters())
    for epoch in range(cfg["epochs"]):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.cuda(local_rank), y.cuda(local_rank)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
