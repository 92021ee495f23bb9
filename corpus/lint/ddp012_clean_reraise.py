"""OOMs are reported with context, then re-raised so torchrun stops the job."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    blob = torch.load("train.pt")
    train_set = TensorDataset(blob["x"], blob["y"])
    model = DDP(nn.Linear(1024, 100).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    sampler = DistributedSampler(train_set, drop_last=True)
    loader = DataLoader(train_set, batch_size=512, sampler=sampler)
    for epoch in range(5):
        sampler.set_epoch(epoch)
        for step, (x, y) in enumerate(loader):
            x, y = x.cuda(local_rank), y.cuda(local_rank)
            optimizer.zero_grad(set_to_none=True)
            try:
                loss = nn.functional.cross_entropy(model(x), y)
                loss.backward()
            except torch.cuda.OutOfMemoryError:
                peak = torch.cuda.max_memory_allocated(local_rank) / 2**30
                print(f"rank {dist.get_rank()} OOM at epoch {epoch} step {step}, peak {peak:.1f} GiB")
                raise
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
