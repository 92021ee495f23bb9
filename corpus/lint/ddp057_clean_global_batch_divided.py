"""The option is the global batch, divided by the world size for each process's loader;
the global batch is also what the learning-rate schedule logs."""
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


def build(train_set, args):
    world_size = dist.get_world_size()
    global_batch = args.batch_size_per_gpu * world_size
    print(f"global batch {global_batch}")
    per_process = args.global_batch_size // world_size
    sampler = DistributedSampler(train_set, shuffle=True)
    return DataLoader(train_set, batch_size=per_process, sampler=sampler, drop_last=True)
