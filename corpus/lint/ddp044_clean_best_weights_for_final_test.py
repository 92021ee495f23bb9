"""After training, rank 0 alone loads the best weights into the bare module for the final
test: no rank trains afterwards, so the replicas no longer matter."""

import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(nn.Linear(16, 4).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    data = TensorDataset(torch.randn(160, 16), torch.randint(0, 4, (160,)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    for epoch in range(10):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.barrier()
    if dist.get_rank() == 0:
        model.module.load_state_dict(torch.load("best.pt", map_location="cuda"))
        model.module.eval()
        with torch.no_grad():
            x, y = data.tensors
            accuracy = (model.module(x.cuda()).argmax(1) == y.cuda()).float().mean()
        print(f"test accuracy {accuracy:.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
