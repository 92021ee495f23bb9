"""Model wrapping for distributed runs."""
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def wrap_model(model, device_id):
    if dist.is_initialized() and dist.get_world_size() > 1:
        return DistributedDataParallel(model, device_ids=[device_id])
    return model
