"""A small trainer meant for laptops and GPU boxes alike: one gloo group on every
machine, the model moved to CUDA only where there is one. On a CPU machine gloo is the
only backend there is; the rule cannot tell which machines the users run it on."""

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from toy import TinyRegressor, make_loader


def main():
    dist.init_process_group(backend="gloo")
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    model = TinyRegressor()
    if torch.cuda.is_available():
        torch.cuda.set_device(local_rank)
        model = DistributedDataParallel(model.cuda(local_rank), device_ids=[local_rank])
    else:
        model = DistributedDataParallel(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    loader, sampler = make_loader(batch_size=64)
    for epoch in range(10):
        sampler.set_epoch(epoch)
        for x, y in loader:
            if torch.cuda.is_available():
                x, y = x.cuda(local_rank), y.cuda(local_rank)
            loss = torch.nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
