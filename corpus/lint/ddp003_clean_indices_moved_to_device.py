"""Pseudo-labelling pass of a semi-supervised trainer: the unlabelled set yields each
sample's index, the loop moves every part of the batch to the GPU in one comprehension,
and the gathered predictions are written at their indices, so a padded repeat only
rewrites its own label."""
import os

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


@torch.no_grad()
def pseudo_label(model, unlabelled, threshold=0.95):
    world_size = dist.get_world_size()
    sampler = DistributedSampler(unlabelled, shuffle=False)
    loader = DataLoader(unlabelled, batch_size=256, sampler=sampler, num_workers=6)
    labels = torch.full((len(unlabelled),), -1, dtype=torch.long)
    model.eval()
    for batch in loader:
        images, index = [part.cuda(non_blocking=True) for part in batch]
        confidence, predicted = model(images).softmax(dim=1).max(dim=1)
        predicted[confidence < threshold] = -1
        all_index = [torch.zeros_like(index) for _ in range(world_size)]
        all_predicted = [torch.zeros_like(predicted) for _ in range(world_size)]
        dist.all_gather(all_index, index)
        dist.all_gather(all_predicted, predicted)
        labels[torch.cat(all_index).cpu()] = torch.cat(all_predicted).cpu()
    model.train()
    return labels


def main(model, unlabelled):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    labels = pseudo_label(model.cuda(), unlabelled)
    if dist.get_rank() == 0:
        torch.save(labels, "pseudo_labels.pt")
    dist.destroy_process_group()
