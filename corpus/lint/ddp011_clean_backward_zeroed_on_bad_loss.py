"""A finite loss steps as usual; a non-finite one still runs a backward of zero, so the
rank joins DDP's all-reduce with zero gradients and no rank waits."""
import torch
from torch.nn.parallel import DistributedDataParallel as DDP


def train(model, loader, optimizer, local_rank):
    model = DDP(model.cuda(local_rank), device_ids=[local_rank])
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x.cuda(local_rank)), y.cuda(local_rank))
        optimizer.zero_grad()
        if torch.isfinite(loss):
            loss.backward()
        else:
            (loss.nan_to_num(0.0) * 0.0).backward()
        optimizer.step()
