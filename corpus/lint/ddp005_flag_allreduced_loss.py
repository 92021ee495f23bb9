"""The loss is all-reduced, divided by the world size and then backpropagated: DDP's own
gradient averaging then shrinks every gradient by the world size."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def global_mean(loss, world_size):
    dist.all_reduce(loss, op=dist.ReduceOp.SUM)
    return loss / world_size  # expect: DDP005


def main(epochs=4):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    world_size = dist.get_world_size()
    data = TensorDataset(torch.randn(2048, 32), torch.randn(2048, 1))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=32, sampler=sampler, num_workers=2)
    model = DDP(nn.Linear(32, 1).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.cuda(local_rank, non_blocking=True), y.cuda(local_rank, non_blocking=True)
            loss = nn.functional.mse_loss(model(x), y)
            loss = global_mean(loss, world_size)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
