"""Device helpers for several accelerator kinds: the device module is picked at run time,
and `resolve_device` sets this process's device (its local rank) through it."""

import os

import torch


def accelerator_kind():
    return "cuda" if torch.cuda.is_available() else "xpu"


def device_namespace():
    try:
        return getattr(torch, accelerator_kind())
    except AttributeError:
        return torch.cuda


def resolve_device(name=None):
    device = torch.device(name or accelerator_kind())
    if device.type in ("cuda", "xpu"):
        local_rank = int(os.environ.get("LOCAL_RANK", 0))
        device = torch.device(device.type, local_rank)
        device_namespace().set_device(device)
    return device


def count_devices():
    return device_namespace().device_count()
