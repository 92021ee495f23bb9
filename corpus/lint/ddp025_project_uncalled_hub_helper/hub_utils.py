"""Model-loading utilities. The retrying detector loader is kept for notebooks and nothing
in this project calls it: it runs on no rank. The backbone loader is called by every rank
of the trainer at once."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def load_detector_from_hub_with_retry(repo="example-org/detectors", name="small", **kwargs):
    try:
        return torch.hub.load(repo, name, **kwargs)  # expect-preview: DDP025
    except Exception:
        return torch.hub.load(repo, name, force_reload=True, **kwargs)  # expect-preview: DDP025


def load_backbone_weights(model, repo="example-org/backbones"):
    backbone = torch.hub.load(repo, "tiny", pretrained=True)  # expect: DDP025
    model.load_state_dict(backbone.state_dict(), strict=False)
    return model


def wrap(model, local_rank):
    if dist.is_initialized():
        return DDP(model, device_ids=[local_rank])
    return model
