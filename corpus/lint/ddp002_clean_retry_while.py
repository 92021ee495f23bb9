"""A retry loop around one pass (it leaves after the pass), and an iterator made once."""
import os
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def one_pass(model, optimizer, loader, local_rank):
    batches = iter(loader)
    for x, y in batches:
        loss = nn.functional.mse_loss(model(x.cuda(local_rank)), y.cuda(local_rank))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    samples = TensorDataset(torch.randn(1000, 4), torch.randn(1000, 1))
    loader = DataLoader(samples, batch_size=25, sampler=DistributedSampler(samples, drop_last=True))
    model = DDP(nn.Linear(4, 1).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
    while True:
        try:
            for x, y in loader:
                loss = nn.functional.mse_loss(model(x.cuda(local_rank)), y.cuda(local_rank))
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        except ConnectionError:
            time.sleep(5)
            continue
        break
    one_pass(model, optimizer, loader, local_rank)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
