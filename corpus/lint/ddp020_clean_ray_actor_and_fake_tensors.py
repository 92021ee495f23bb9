"""A Ray actor given a GPU sees only its own GPU, so the default CUDA device is right there;
tensors made under `FakeTensorMode` only describe shapes and take no GPU memory. The
launched trainer at the end uses the default device on every rank without choosing one."""

import ray
import torch
import torch.distributed as dist
from torch import nn
from torch._subclasses.fake_tensor import FakeTensorMode


@ray.remote(num_gpus=1)
class Learner:
    def __init__(self):
        dist.init_process_group("nccl")
        self.model = nn.Linear(16, 16).cuda()

    def shapes(self):
        with FakeTensorMode():
            fake = {
                k: torch.empty(v.shape, device="cuda") for k, v in self.model.state_dict().items()
            }
        return {k: tuple(v.shape) for k, v in fake.items()}


def plan_memory(shapes):
    with FakeTensorMode():
        return sum(torch.empty(s, device="cuda").numel() for s in shapes)


def train():
    dist.init_process_group("nccl")
    model = nn.Linear(16, 16).cuda()  # expect: DDP020
    return model
