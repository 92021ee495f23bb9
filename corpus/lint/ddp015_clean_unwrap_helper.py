"""DDP trainer whose checkpoint helper unwraps either wrapper with isinstance()."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def unwrap(model):
    """Works for checkpoints written by the old DataParallel version too."""
    if isinstance(model, (nn.DataParallel, DDP)):
        return model.module
    return model


def save_checkpoint(model, epoch, path):
    tmp = f"{path}.tmp"
    torch.save({"model": unwrap(model).state_dict(), "epoch": epoch}, tmp)
    os.replace(tmp, path)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    dataset = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))
    sampler = DistributedSampler(dataset, shuffle=True, drop_last=True)
    loader = DataLoader(dataset, batch_size=64, sampler=sampler)

    model = DDP(nn.Linear(16, 1).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.cuda(local_rank), y.cuda(local_rank)
            loss = nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            save_checkpoint(model, epoch, "last.pt")
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
