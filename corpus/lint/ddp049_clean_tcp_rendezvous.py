"""Started by hand on each machine (`python train.py --rank R --world-size 2
--dist-url tcp://head:23456`): the script runs its own rendezvous, so the size and the
rank it passes are the ones the user gives, not a launcher's."""
import argparse

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--world-size", type=int, default=2)
    parser.add_argument("--rank", type=int, default=0)
    parser.add_argument("--dist-url", default="tcp://127.0.0.1:23456")
    args = parser.parse_args()
    dist.init_process_group(
        "gloo", init_method=args.dist_url, world_size=args.world_size, rank=args.rank
    )
    data = TensorDataset(torch.randn(512, 4), torch.randn(512, 1))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    model = DDP(nn.Linear(4, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(10):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
