"""Builds the backbone directly on every rank."""
import torch.distributed as dist

from extractors import HubBackbone


def probe():
    dist.init_process_group("gloo")
    return HubBackbone("base")
