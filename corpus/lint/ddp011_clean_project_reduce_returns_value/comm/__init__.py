"""The toolkit's collectives: thin wrappers that return what they reduce."""

import torch.distributed as torch_dist


def all_reduce(tensor, average=True):
    torch_dist.all_reduce(tensor)
    if average:
        tensor /= torch_dist.get_world_size()
    return tensor
