"""Loss scaling for one process; `agree` makes every process use the smallest scale."""

import torch
import torch.distributed as dist


def prepare(model, optimizer, init_scale=2.0**16):
    return model.half(), optimizer, torch.cuda.amp.GradScaler(init_scale=init_scale)


def agree(scaler):
    scale = torch.tensor([scaler.get_scale()], device="cuda")
    dist.all_reduce(scale, op=dist.ReduceOp.MIN)
    scaler.update(scale.item())
