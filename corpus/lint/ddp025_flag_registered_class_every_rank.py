"""The twin of the registered extractors without the rank-0-first order: the factory builds
the class on every rank at once, and each rank fetches and extracts the hub repository into
the same folder."""
import torch
import torch.distributed as dist


class HubEncoder:
    def __init__(self, variant):
        self.model = torch.hub.load("example-org/feature-models", variant)  # expect: DDP025


class PixelEncoder:
    def __init__(self):
        self.model = torch.nn.Identity()


SPECS = {
    "hub": {"cls": HubEncoder, "kwargs": {"variant": "small"}},
    "pixels": {"cls": PixelEncoder, "kwargs": {}},
}


def build(spec):
    return spec["cls"](**spec["kwargs"])


def get_features(metric):
    if metric not in SPECS:
        raise ValueError(f"unknown metric {metric}")
    features = build(SPECS[metric])
    dist.barrier()
    return features
