"""The validation loader takes a larger batch (memory is free without gradients): its
sampler does not shuffle and the metric is summed over ranks, so the batch size changes
nothing but speed."""
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


@torch.no_grad()
def validate(model, val_set, args):
    world_size = dist.get_world_size()
    sampler = DistributedSampler(val_set, shuffle=False, drop_last=True)
    loader = DataLoader(val_set, batch_size=args.batch_size * world_size, sampler=sampler)
    correct = torch.zeros(2, device="cuda")
    for images, labels in loader:
        preds = model(images.cuda()).argmax(dim=1)
        correct += torch.stack([(preds == labels.cuda()).sum(), torch.tensor(labels.numel(), device="cuda")])
    dist.all_reduce(correct)
    return (correct[0] / correct[1]).item()
