"""`Runner` is built without touching the process group; only its `wrap` method does.
`Cluster` joins the group when it is constructed."""

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


class Runner:
    def __init__(self, lr=0.1):
        self.lr = lr

    def wrap(self, model):
        local_rank = int(os.environ.get("LOCAL_RANK", 0))
        return DistributedDataParallel(model.cuda(local_rank), device_ids=[local_rank])

    def optimizer(self, model):
        return torch.optim.SGD(model.parameters(), lr=self.lr)


class Cluster:
    def __init__(self, backend="nccl"):
        dist.init_process_group(backend)
        self.rank = dist.get_rank()
        self.world_size = dist.get_world_size()
