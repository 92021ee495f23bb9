"""An analysis pass over a sharded loader accumulates running sums and extremes, puts them in
a list, and all-reduces each element of that list in a loop (the extremes with MIN and MAX):
every statistic rank 0 logs afterwards is over the whole set."""
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


@torch.no_grad()
def measure_margins(model, dataset, device):
    loader = DataLoader(dataset, batch_size=64, sampler=DistributedSampler(dataset, shuffle=False))  # expect-preview: DDP003
    model.eval()
    margin_sum = torch.zeros(1, device=device)
    margin_sq_sum = torch.zeros(1, device=device)
    lowest = torch.full((1,), float("inf"), device=device)
    count = torch.zeros(1, device=device)
    for images, labels in loader:
        logits = model(images.to(device))
        top2 = logits.topk(2, dim=1).values
        margin = top2[:, 0] - top2[:, 1]
        margin_sum += margin.sum()
        margin_sq_sum += margin.pow(2).sum()
        lowest = torch.minimum(lowest, margin.min().unsqueeze(0))
        count += margin.numel()
    totals = [margin_sum, margin_sq_sum, lowest, count]
    for value in totals:
        if value is lowest:
            dist.all_reduce(value, op=dist.ReduceOp.MIN)
        else:
            dist.all_reduce(value)
    mean = (margin_sum / count.clamp_min(1)).item()
    spread = (margin_sq_sum / count.clamp_min(1) - mean**2).clamp_min(0).sqrt().item()
    if dist.get_rank() == 0:
        print(f"margin mean {mean:.4f} std {spread:.4f} min {lowest.item():.4f}")
    return mean
