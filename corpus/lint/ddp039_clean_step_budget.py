"""Training stops on a step budget (the same on every rank), and evaluation picks the
best checkpoint on a loss all-reduced first."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def reduce_mean(value, device):
    t = torch.tensor([value], device=device)
    dist.all_reduce(t)
    return t.item() / dist.get_world_size()


def main(max_steps=20_000):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    train_set = TensorDataset(torch.randn(3000, 4), torch.randn(3000, 1))
    val_set = TensorDataset(torch.randn(600, 4), torch.randn(600, 1))
    sampler = DistributedSampler(train_set, drop_last=True)
    loader = DataLoader(train_set, batch_size=30, sampler=sampler)
    val_loader = DataLoader(val_set, batch_size=30, sampler=DistributedSampler(val_set, shuffle=False, drop_last=True))
    model = DDP(nn.Linear(4, 1).to(device), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    step, best = 0, float("inf")
    for epoch in range(10_000):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
        model.eval()
        val = 0.0
        with torch.no_grad():
            for x, y in val_loader:
                val += nn.functional.mse_loss(model(x.to(device)), y.to(device)).item()
        model.train()
        val = reduce_mean(val / len(val_loader), device)
        if val < best and dist.get_rank() == 0:
            best = val
            torch.save(model.module.state_dict(), "best.tmp")
            os.replace("best.tmp", "best.pt")
        if step >= max_steps:
            break
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
