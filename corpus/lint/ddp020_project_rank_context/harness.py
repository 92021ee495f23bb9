"""Test harness for per-rank workers: `RankScope` sets the rank's device when entered,
`PinnedGroup` when constructed; `GroupScope` only joins the process group."""

import torch
import torch.distributed as dist


class RankScope:
    def __init__(self, rank):
        self.rank = rank

    def __enter__(self):
        if torch.cuda.is_available():
            torch.cuda.set_device(self.rank % torch.cuda.device_count())
        return self

    def __exit__(self, *exc):
        return False


class PinnedGroup:
    def __init__(self, rank):
        self.device = torch.device("cuda", rank % torch.cuda.device_count())
        torch.cuda.set_device(self.device)


class GroupScope:
    def __init__(self, rank, world_size):
        self.rank, self.world_size = rank, world_size

    def __enter__(self):
        dist.init_process_group("nccl", rank=self.rank, world_size=self.world_size)
        return self

    def __exit__(self, *exc):
        dist.destroy_process_group()
        return False
