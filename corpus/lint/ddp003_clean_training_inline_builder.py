"""Loader builders; the training one forgets drop_last, evaluation is fine as is.
A training sampler that pads repeats a few samples per epoch, a cost maintainers keep:
not reported."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils import data


def build_train_loader(dataset, batch_size, workers=8):
    return data.DataLoader(
        dataset,
        batch_size=batch_size,
        sampler=data.distributed.DistributedSampler(dataset),
        num_workers=workers,
        pin_memory=True,
        persistent_workers=True,
    )


def build_val_loader(dataset, batch_size):
    sampler = data.DistributedSampler(dataset, shuffle=False)
    return data.DataLoader(dataset, batch_size=batch_size, sampler=sampler)


def main(epochs=10):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    train_set = data.TensorDataset(torch.randn(777, 16), torch.randint(0, 4, (777,)))
    val_set = data.TensorDataset(torch.randn(100, 16), torch.randint(0, 4, (100,)))
    train_loader = build_train_loader(train_set, 32)
    val_loader = build_val_loader(val_set, 64)
    model = DDP(nn.Linear(16, 4).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for epoch in range(epochs):
        train_loader.sampler.set_epoch(epoch)
        for x, y in train_loader:
            loss = nn.functional.cross_entropy(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        with torch.no_grad():
            for x, y in val_loader:
                model(x.cuda(local_rank))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
