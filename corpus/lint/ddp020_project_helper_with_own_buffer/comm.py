"""Process-group helpers shared by the trainers. `all_gather_objects` keeps its buffers as
attributes of itself (`all_gather_objects._buffer`): naming itself is no call. It runs on
the device its callers chose: train.py sets it before anything calls it."""
import pickle

import torch
import torch.distributed


def init(device_id, world_size, url="tcp://127.0.0.1:29500"):
    torch.distributed.init_process_group("nccl", init_method=url, world_size=world_size, rank=device_id)
    return torch.distributed.get_rank()


def all_gather_objects(obj, max_size=8192):
    world_size = torch.distributed.get_world_size()
    if getattr(all_gather_objects, "_size", None) != max_size:
        all_gather_objects._buffer = torch.cuda.ByteTensor(max_size)
        all_gather_objects._size = max_size
    buffer = all_gather_objects._buffer
    data = pickle.dumps(obj)
    buffer[0] = len(data) // 256
    buffer[1] = len(data) % 256
    buffer[2 : len(data) + 2] = torch.ByteTensor(list(data))
    outputs = [torch.empty_like(buffer) for _ in range(world_size)]
    torch.distributed.all_gather(outputs, buffer.cuda())
    found = []
    for out in outputs:
        size = int(out[0].item()) * 256 + int(out[1].item())
        found.append(pickle.loads(bytes(out[2 : size + 2].tolist())))
    return found
