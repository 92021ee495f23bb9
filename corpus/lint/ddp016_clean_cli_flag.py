"""find_unused_parameters is a command-line switch, used only for the branchy variant."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Branchy(nn.Module):
    def __init__(self, skip_aux):
        super().__init__()
        self.body = nn.Linear(16, 16)
        self.aux = nn.Linear(16, 16)
        self.skip_aux = skip_aux

    def forward(self, x):
        x = torch.relu(self.body(x))
        return x if self.skip_aux else self.aux(x)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--skip-aux", action="store_true")
    parser.add_argument("--find-unused", action="store_true")
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = Branchy(args.skip_aux).cuda(local_rank)
    model = DDP(model, device_ids=[local_rank], find_unused_parameters=args.find_unused)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    data = TensorDataset(torch.randn(2048, 16), torch.randn(2048, 16))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
