"""No accumulation: the optimizer steps every batch; only the LR decay and logging are periodic."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

DECAY_EVERY = 200
LOG_EVERY = 100


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)

    data = TensorDataset(torch.randn(8192, 20), torch.randint(0, 5, (8192,)))
    model = DDP(nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 5)).to(device),
                device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.9)
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=64, sampler=sampler)

    for epoch in range(4):
        sampler.set_epoch(epoch)
        for i, (x, y) in enumerate(loader):
            loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if (i + 1) % DECAY_EVERY == 0:
                scheduler.step()
            if i % LOG_EVERY == 0 and dist.get_rank() == 0:
                print(f"epoch {epoch} it {i} loss {loss.item():.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
