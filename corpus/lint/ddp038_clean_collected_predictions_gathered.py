"""Every rank collects the predictions of its shard; they are gathered from every rank
before the metric is computed and printed (the sampler's padding is DDP003's)."""
import numpy as np
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


def evaluate(model, test_set):
    sampler = DistributedSampler(test_set, shuffle=False)  # expect: DDP003
    loader = DataLoader(test_set, batch_size=64, sampler=sampler)
    preds, labels = [], []
    model.eval()
    with torch.no_grad():
        for x, y in loader:
            preds.append(model(x.cuda()).argmax(1).cpu())
            labels.append(y)
    shards = [None] * dist.get_world_size()
    dist.all_gather_object(shards, (torch.cat(preds), torch.cat(labels)))
    preds = torch.cat([p for p, _ in shards]).numpy()
    labels = torch.cat([t for _, t in shards]).numpy()
    accuracy = float(np.mean(preds == labels))
    if dist.get_rank() == 0:
        print(f"test accuracy {accuracy:.4f}")
    return accuracy
