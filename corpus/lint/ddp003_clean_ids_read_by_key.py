"""Generation for evaluation: every batch carries the examples' ids, which are gathered
with the outputs and key the predictions, so a padded repeat overwrites its own entry."""
import json

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


def gather(tensor):
    parts = [torch.zeros_like(tensor) for _ in range(dist.get_world_size())]
    dist.all_gather(parts, tensor)
    return torch.cat(parts)


@torch.no_grad()
def generate_all(model, valid_set, device, out_path):
    loader = DataLoader(valid_set, batch_size=8, sampler=DistributedSampler(valid_set, shuffle=False))
    predictions = {}
    for step, batch in enumerate(loader):
        ids = batch["id"].to(device)
        tokens = model.generate(batch["input_ids"].to(device), max_new_tokens=64)
        for key, output in zip(gather(ids).tolist(), gather(tokens).tolist()):
            predictions[key] = output
    if dist.get_rank() == 0:
        with open(out_path, "w") as f:
            json.dump(predictions, f)
