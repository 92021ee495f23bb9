"""Trains through the wrapper; evaluates and saves through model_without_ddp."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    loss_sum, count = 0.0, 0
    for x, y in loader:
        pred = model(x.to(device))
        loss_sum += nn.functional.mse_loss(pred, y.to(device), reduction="sum").item()
        count += y.numel()
    model.train()
    return loss_sum / count


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)

    train_set = TensorDataset(torch.randn(8192, 12), torch.randn(8192, 1))
    val_set = TensorDataset(torch.randn(1024, 12), torch.randn(1024, 1))
    model = DDP(nn.Sequential(nn.Linear(12, 32), nn.Tanh(), nn.Linear(32, 1)).to(device),
                device_ids=[local_rank])
    model_without_ddp = model.module
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    sampler = DistributedSampler(train_set, shuffle=True, drop_last=True)
    loader = DataLoader(train_set, batch_size=64, sampler=sampler)
    val_loader = DataLoader(val_set, batch_size=256, sampler=DistributedSampler(val_set, shuffle=False))

    for epoch in range(5):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            print(f"epoch {epoch}: val mse {evaluate(model_without_ddp, val_loader, device):.4f}")  # expect: DDP038
            tmp = "regressor.pt.tmp"
            torch.save(model_without_ddp.state_dict(), tmp)
            os.replace(tmp, "regressor.pt")
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
