"""The usual pattern: the model is trained through the DDP wrapper, and its `.module` is
kept beside it to save and evaluate without the `module.` prefix."""

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(torch.nn.Linear(32, 4).cuda(local_rank), device_ids=[local_rank])
    model_without_ddp = model.module
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    train_set = TensorDataset(torch.randn(512, 32), torch.randint(0, 4, (512,)))
    sampler = DistributedSampler(train_set, shuffle=True, drop_last=True)
    loader = DataLoader(train_set, batch_size=32, sampler=sampler, num_workers=2)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.cuda(local_rank, non_blocking=True), y.cuda(local_rank, non_blocking=True)
            loss = torch.nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            torch.save(model_without_ddp.state_dict(), f"epoch{epoch}.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
