"""The author "averaged" the loss over GPUs by hand, on top of DDP's averaging."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main(epochs=5):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    data = TensorDataset(torch.randn(4000, 10), torch.randint(0, 4, (4000,)))
    sampler = DistributedSampler(data, drop_last=True)
    loader = DataLoader(data, batch_size=50, sampler=sampler)
    model = DDP(nn.Linear(10, 4).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    criterion = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        running = torch.zeros(1, device=f"cuda:{local_rank}")
        for x, y in loader:
            x, y = x.cuda(local_rank), y.cuda(local_rank)
            loss = criterion(model(x), y) / dist.get_world_size()  # expect: DDP005
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            running += loss.detach()
        # Logging: average of the per-rank sums (fine on its own).
        dist.all_reduce(running)
        running /= dist.get_world_size()
        if dist.get_rank() == 0:
            print(f"epoch {epoch} loss {running.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
