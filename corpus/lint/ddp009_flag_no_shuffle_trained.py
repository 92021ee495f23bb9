"""Regression on tabular data; the loader has no sampler and no shuffle, and is trained on."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.utils import data as tud


class Table(tud.Dataset):
    def __init__(self, path):
        blob = torch.load(path)
        self.features = blob["features"].float()
        self.targets = blob["targets"].float()

    def __len__(self):
        return self.features.shape[0]

    def __getitem__(self, i):
        return self.features[i], self.targets[i]


def setup():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    return local_rank


def main():
    local_rank = setup()
    device = torch.device(f"cuda:{local_rank}")
    net = nn.Sequential(nn.Linear(40, 256), nn.GELU(), nn.Linear(256, 1)).to(device)
    model = nn.parallel.DistributedDataParallel(net, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=50)
    loader = tud.DataLoader(Table("houses.pt"), batch_size=256, num_workers=2)  # expect: DDP009
    for epoch in range(50):
        running = 0.0
        for features, targets in loader:
            features, targets = features.to(device), targets.to(device)
            loss = nn.functional.mse_loss(model(features).squeeze(-1), targets)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            running += loss.item()
        scheduler.step()
        if dist.get_rank() == 0:
            print(epoch, running)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
