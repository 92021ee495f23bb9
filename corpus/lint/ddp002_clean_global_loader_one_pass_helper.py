"""A feature-extraction script: `extract()` reads the global loader once, after the
encoder is loaded; one pass over a shuffling sampler needs no `set_epoch`. The helper
`summarize(train_loader)` takes its own parameter of the same name."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


@torch.no_grad()
def extract():
    feats = []
    for images, _ in train_loader:
        feats.append(encoder(images.cuda()).cpu())
    return torch.cat(feats)


def summarize(train_loader):
    return sum(len(batch[0]) for batch in train_loader)


if __name__ == "__main__":
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl")
    data = TensorDataset(torch.randn(2048, 3, 32, 32), torch.zeros(2048))
    train_loader = DataLoader(data, batch_size=128, sampler=DistributedSampler(data))
    encoder = nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 128)).cuda().eval()
    features = extract()
    torch.save(features, f"features_rank{dist.get_rank()}.pt")
    for repeat in range(3):
        print(summarize(DataLoader(data, batch_size=256)))
    dist.destroy_process_group()
