"""The TensorBoard writer exists on rank 0 only, and the code uses it as the rank test:
the loss is averaged across ranks inside `if writer is not None:`, which only rank 0
enters. `torchrun --nproc_per_node=4 train.py`."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset
from torch.utils.tensorboard import SummaryWriter


def main():
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    writer = SummaryWriter("runs/exp") if rank == 0 else None
    data = TensorDataset(torch.randn(8192, 128), torch.randint(0, 10, (8192,)))
    sampler = DistributedSampler(data, drop_last=True)
    loader = DataLoader(data, batch_size=64, sampler=sampler)
    model = DDP(nn.Linear(128, 10).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    step = 0
    for epoch in range(20):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            if writer is not None and step % 100 == 0:
                mean_loss = loss.detach().clone()
                dist.all_reduce(mean_loss)  # expect: DDP010
                writer.add_scalar("train/loss", mean_loss.item() / dist.get_world_size(), step)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
