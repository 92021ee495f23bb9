"""The training loader comes from data.build_loaders; nothing calls set_epoch on it."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import TensorDataset

from data import build_loaders


@torch.no_grad()
def evaluate(model, loader, local_rank):
    total = torch.zeros(1, device=torch.device("cuda", local_rank))
    for x, y in loader:
        total += nn.functional.mse_loss(model(x.cuda(local_rank)), y.cuda(local_rank), reduction="sum")
    dist.all_reduce(total)
    return total.item()


def main(epochs=12):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    train_set = TensorDataset(torch.randn(9000, 12), torch.randn(9000, 1))
    val_set = TensorDataset(torch.randn(900, 12), torch.randn(900, 1))
    train_loader, val_loader = build_loaders(train_set, val_set, 64)
    model = DDP(nn.Linear(12, 1).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(epochs):  # expect: DDP002
        for x, y in train_loader:
            loss = nn.functional.mse_loss(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        val_loss = evaluate(model.module, val_loader, local_rank)
        if dist.get_rank() == 0:
            print(epoch, val_loss)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
