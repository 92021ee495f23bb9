"""The driver makes one reference actor: its hub download runs in one process. The policy
actors are made once per rank, so their download runs on every rank at once."""

import ray
import torch.distributed as dist
from transformers import AutoModel


@ray.remote(num_gpus=1)
class Reference:
    def __init__(self):
        self.model = AutoModel.from_pretrained("gpt2").cuda()


@ray.remote(num_gpus=1)
class Policy:
    def __init__(self, rank, world_size):
        dist.init_process_group("nccl", rank=rank, world_size=world_size)
        self.model = AutoModel.from_pretrained("gpt2").cuda()  # expect: DDP025


def main(world_size=4):
    ray.init()
    reference = Reference.remote()
    policies = [Policy.remote(rank, world_size) for rank in range(world_size)]
    return reference, policies


def evaluate():
    ray.init()
    return Reference.remote()


def pair(world_size=2):
    ray.init()
    first = Policy.remote(0, world_size)
    second = Policy.remote(1, world_size)
    return first, second
