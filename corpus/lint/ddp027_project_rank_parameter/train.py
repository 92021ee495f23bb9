"""torchrun entry point: hands its local rank to `define_loaders`, and the same seed to
every rank's test loader."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import TensorDataset

from loaders import define_loaders, define_test_loader


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    train_set = TensorDataset(torch.randn(2048, 64), torch.randint(0, 2, (2048,)))
    val_set = TensorDataset(torch.randn(256, 64), torch.randint(0, 2, (256,)))
    train_loader, val_loader = define_loaders(
        train_set, val_set, distributed=True, world_size=world_size, local_rank=local_rank
    )
    test_loader = define_test_loader(val_set, world_size=world_size, seed=1234)
    model = DDP(nn.Linear(64, 2).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-4)
    for epoch in range(10):
        train_loader.sampler.set_epoch(epoch)
        for x, y in train_loader:
            loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    with torch.no_grad():
        for x, _ in test_loader:
            model(x.cuda())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
