"""The same two launch modes, but the distributed path all-reduces the summed loss and
the sample count before anything is logged: the figure is the whole set's (the padding of
the evaluation sampler is DDP003's, unproven: the set's size is not in sight)."""
import argparse

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


def main(model, criterion, val_set, device):
    parser = argparse.ArgumentParser()
    parser.add_argument("--distributed", action="store_true")
    opt = parser.parse_args()
    if opt.distributed:
        dist.init_process_group("nccl")
        val_loader = DataLoader(
            val_set,
            batch_size=8,
            sampler=DistributedSampler(val_set, shuffle=False),  # expect-preview: DDP003
        )
    else:
        val_loader = DataLoader(val_set, batch_size=8, shuffle=False)
    total = torch.zeros(2, device=device)
    model.eval()
    with torch.no_grad():
        for batch, target in val_loader:
            loss = criterion(model(batch.to(device)), target.to(device))
            total += torch.stack([loss * len(target), torch.tensor(float(len(target)), device=device)])
    if opt.distributed:
        dist.all_reduce(total)
    print(f"validation loss {(total[0] / total[1]).item():.4f}")
