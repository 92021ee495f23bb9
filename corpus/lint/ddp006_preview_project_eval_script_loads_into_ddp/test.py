"""Evaluates a trained checkpoint under the same launcher as training: the network is
wrapped in DDP first, so the `module.` keys of the saved state dict load as they are."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel


def evaluate(weights, loader):
    dist.init_process_group("nccl")
    gpu = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(gpu)
    net_sound = nn.Sequential(nn.Conv1d(1, 32, 9, stride=4), nn.ReLU(), nn.AdaptiveAvgPool1d(1)).cuda()
    net_sound = DistributedDataParallel(net_sound, device_ids=[gpu])
    net_sound.load_state_dict(torch.load(weights, map_location=f"cuda:{gpu}"))
    net_sound.eval()
    errors = []
    with torch.no_grad():
        for audio, target in loader:
            errors.append(nn.functional.mse_loss(net_sound(audio.cuda()).flatten(1), target.cuda()))
    return torch.stack(errors).mean()
