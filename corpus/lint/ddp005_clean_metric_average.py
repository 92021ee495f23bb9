"""Loss averaged across ranks for logging only, after the backward pass."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def reduce_mean(tensor, world_size):
    reduced = tensor.detach().clone()
    dist.all_reduce(reduced, op=dist.ReduceOp.SUM)
    reduced /= world_size
    return reduced


def main(epochs=6):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    world_size = dist.get_world_size()
    data = TensorDataset(torch.randn(3200, 16), torch.randint(0, 2, (3200,)))
    sampler = DistributedSampler(data, drop_last=True)
    loader = DataLoader(data, batch_size=64, sampler=sampler)
    model = DDP(nn.Linear(16, 2).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05 * world_size)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        seen = 0.0
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            avg = reduce_mean(loss, world_size)
            seen += loss.item() / world_size
        if dist.get_rank() == 0:
            print(f"epoch {epoch}: mean loss {avg.item():.4f}, {seen:.2f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
