"""A VQ-VAE trainer sums each rank's epoch loss with `all_reduce`, but on a tensor made in
the call: the sum is lost, and rank 0 logs its own loss divided by the world size."""
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler


def train_epoch(model, loader, optimizer, device):
    model.train()
    total_loss = 0.0
    for images in loader:
        images = images.to(device, non_blocking=True)
        recon, commit = model(images)
        loss = F.mse_loss(recon, images) + 0.25 * commit
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        total_loss += loss.item()
    dist.all_reduce(torch.tensor(total_loss).to(device))  # expect: DDP063
    return total_loss / (len(loader) * dist.get_world_size())


def main(dataset, build_model, epochs=100):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    model = DDP(build_model().to(device), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-4)
    sampler = DistributedSampler(dataset, shuffle=True)
    loader = DataLoader(dataset, batch_size=64, sampler=sampler, num_workers=4)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        mean_loss = train_epoch(model, loader, optimizer, device)
        if dist.get_rank() == 0:
            print(f"epoch {epoch} loss {mean_loss:.5f}")
    dist.destroy_process_group()
