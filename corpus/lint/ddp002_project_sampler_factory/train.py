"""The training sampler comes from the project's factory with shuffle=True and never gets
an epoch; the validation one is built with shuffle=False."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset

from dist_utils import make_data_sampler


@torch.no_grad()
def validate(model, loader, device):
    totals = torch.zeros(2, device=device)
    for x, y in loader:
        totals[0] += nn.functional.l1_loss(model(x.to(device)), y.to(device), reduction="sum")
        totals[1] += y.numel()
    dist.all_reduce(totals)
    return (totals[0] / totals[1]).item()


def main(epochs=60):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    train_set = TensorDataset(torch.randn(7000, 3), torch.randn(7000, 1))
    val_set = TensorDataset(torch.randn(700, 3), torch.randn(700, 1))
    train_sampler = make_data_sampler(train_set, shuffle=True, distributed=True)
    val_sampler = make_data_sampler(val_set, shuffle=False, distributed=True)
    train_loader = DataLoader(train_set, batch_size=70, sampler=train_sampler)
    val_loader = DataLoader(val_set, batch_size=70, sampler=val_sampler)
    model = DDP(nn.Linear(3, 1).to(device), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
    for epoch in range(epochs):  # expect: DDP002
        for x, y in train_loader:
            loss = nn.functional.l1_loss(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        for _ in range(2):
            score = validate(model, val_loader, device)
        if dist.get_rank() == 0:
            print(epoch, score)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
