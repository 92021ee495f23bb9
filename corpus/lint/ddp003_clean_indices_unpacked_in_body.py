"""Feature bank for clustering: the dataset yields each sample's index, which the loop
unpacks in its body and uses to place the gathered features, so a padded repeat only
rewrites its own row."""
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


def gather_rows(tensor):
    parts = [torch.zeros_like(tensor) for _ in range(dist.get_world_size())]
    dist.all_gather(parts, tensor)
    return torch.cat(parts)


@torch.no_grad()
def build_bank(encoder, dataset, device, dim=128):
    sampler = DistributedSampler(dataset, shuffle=False)
    loader = DataLoader(dataset, batch_size=256, sampler=sampler, num_workers=8)
    bank = torch.zeros(len(dataset), dim)
    for batch in loader:
        idx, images, _ = batch
        features = gather_rows(encoder(images.to(device)))
        bank[gather_rows(idx.to(device)).cpu()] = features.cpu()
    return bank
