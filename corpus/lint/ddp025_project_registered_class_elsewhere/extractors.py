"""Extractors kept in a table and built by a rank-0-first factory; but `probe.py` imports
the class and builds it on every rank, so the hub load is not always rank 0's alone."""
import torch
import torch.distributed as dist


class HubBackbone:
    def __init__(self, variant):
        self.model = torch.hub.load("example-org/backbones", variant)  # expect: DDP025


TABLE = {"hub": {"cls": HubBackbone, "kwargs": {"variant": "base"}}}


def get_extractor(name):
    if dist.get_rank() != 0:
        dist.barrier()
    spec = TABLE[name]
    extractor = spec["cls"](**spec["kwargs"])
    if dist.get_rank() == 0:
        dist.barrier()
    return extractor
