"""Retrieval evaluation that numbers its batches with `enumerate` and also reads each
sample's dataset index: the gathered embeddings are placed by index, so the padded
repeats overwrite their own rows and count once."""
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


@torch.no_grad()
def embed_all(encoder, dataset, device, dim=256):
    sampler = DistributedSampler(dataset, shuffle=False)
    loader = DataLoader(dataset, batch_size=128, sampler=sampler)
    table = torch.zeros(len(dataset), dim, device=device)
    for step, (images, index) in enumerate(loader):
        vectors = encoder(images.to(device))
        rows = [torch.zeros_like(vectors) for _ in range(dist.get_world_size())]
        places = [torch.zeros_like(index.to(device)) for _ in range(dist.get_world_size())]
        dist.all_gather(rows, vectors)
        dist.all_gather(places, index.to(device))
        table.index_copy_(0, torch.cat(places), torch.cat(rows))
        if step % 50 == 0 and dist.get_rank() == 0:
            print(f"embedded {step} batches")
    return table
