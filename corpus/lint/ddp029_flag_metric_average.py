"""Logs the loss averaged over the ranks: summed with all_reduce, then divided by the
GPUs of this machine."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def average_across_ranks(value):
    reduced = value.detach().clone()
    dist.all_reduce(reduced, op=dist.ReduceOp.SUM)
    reduced /= torch.cuda.device_count()  # expect: DDP029
    return reduced


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    dataset = TensorDataset(torch.randn(12000, 32), torch.randn(12000, 1))
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, batch_size=64, sampler=sampler)
    model = DDP(nn.Linear(32, 1).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-4)
    for epoch in range(10):
        sampler.set_epoch(epoch)
        for step, (x, y) in enumerate(loader):
            x, y = x.cuda(local_rank), y.cuda(local_rank)
            loss = nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            avg = average_across_ranks(loss)
            if step % 50 == 0 and dist.get_rank() == 0:
                print(f"epoch {epoch} step {step} loss {avg.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
