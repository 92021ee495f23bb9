"""Wrap the language model in fairscale's sharded data parallel, every rank holding a
shard; its full state dict is gathered onto the CPU."""
import torch
from fairscale.nn.data_parallel import FullyShardedDataParallel as FSDP


def shard(model):
    return FSDP(
        model.cuda(),
        mixed_precision=True,
        flatten_parameters=True,
        state_dict_device=torch.device("cpu"),
    )
