"""VQ-VAE training that keeps its loaders in a dict and hands entries to epoch helpers."""
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.utils.data import DataLoader, TensorDataset, random_split
from torch.utils.data.distributed import DistributedSampler


def train_epoch(model, loader, optimizer, device):
    model.train()
    total = 0.0
    for images, _ in loader:
        images = images.to(device)
        recon = model(images)
        loss = nn.functional.mse_loss(recon, images)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total / max(len(loader), 1)


@torch.no_grad()
def test_epoch(model, loader, device):
    model.eval()
    total = torch.zeros(2, device=device)
    for images, _ in loader:
        images = images.to(device)
        total += torch.stack([nn.functional.mse_loss(model(images), images), torch.ones((), device=device)])
    dist.all_reduce(total)
    return (total[0] / total[1]).item()


def run(rank, world_size):
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29511", rank=rank, world_size=world_size)
    device = torch.device("cuda", rank)
    images = TensorDataset(torch.rand(6000, 3, 64, 64), torch.zeros(6000))
    train_set, test_set = random_split(images, [5000, 1000], generator=torch.Generator().manual_seed(0))
    train_sampler = DistributedSampler(train_set, num_replicas=world_size, rank=rank)
    test_sampler = DistributedSampler(test_set, num_replicas=world_size, rank=rank, shuffle=False)
    train_loader = DataLoader(train_set, batch_size=16, sampler=train_sampler, num_workers=4)
    test_loader = DataLoader(test_set, batch_size=16, sampler=test_sampler, num_workers=4)
    loaders = {"train": train_loader, "test": test_loader}
    model = nn.Sequential(nn.Conv2d(3, 16, 4, 2, 1), nn.ReLU(), nn.ConvTranspose2d(16, 3, 4, 2, 1))
    model = nn.parallel.DistributedDataParallel(model.to(device), device_ids=[rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-4)
    for epoch in range(1, 201):  # expect: DDP002
        train_epoch(model, loaders["train"], optimizer, device)
        test_loss = test_epoch(model, loaders["test"], device)
        if rank == 0:
            print(f"epoch {epoch}: test loss {test_loss:.5f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(run, args=(4,), nprocs=4, join=True)
