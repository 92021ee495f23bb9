"""The patience check sits in the `else` of the comparison with the best loss, on each
rank's own dev shard."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


@torch.no_grad()
def dev_loss(model, loader, local_rank):
    model.eval()
    summed = 0.0
    for x, y in loader:
        summed += nn.functional.cross_entropy(model(x.cuda(local_rank)), y.cuda(local_rank)).item()
    model.train()
    return summed / len(loader)


def main(max_epochs=500):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    train_set = TensorDataset(torch.randn(4000, 16), torch.randint(0, 2, (4000,)))
    dev_set = TensorDataset(torch.randn(800, 16), torch.randint(0, 2, (800,)))
    sampler = DistributedSampler(train_set, drop_last=True)
    loader = DataLoader(train_set, batch_size=40, sampler=sampler)
    dev_loader = DataLoader(dev_set, batch_size=40, sampler=DistributedSampler(dev_set, shuffle=False, drop_last=True))
    model = DDP(nn.Linear(16, 2).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-4)
    best = float("inf")
    strikes = 0
    for epoch in range(max_epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        current = dev_loss(model, dev_loader, local_rank)
        if current < best - 1e-4:  # expect: DDP038
            best = current
            strikes = 0
        else:
            strikes += 1
            if strikes > 5:
                break  # expect: DDP039
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
