"""A test helper that runs a function in a spawned job of `tp * dp * pp` processes, each
joining the process group first."""
import os

import torch.distributed as dist
import torch.multiprocessing as mp


def _join(rank, world_size, func, kwargs):
    os.environ.setdefault("MASTER_ADDR", "localhost")
    os.environ.setdefault("MASTER_PORT", "29516")
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    func(**kwargs)
    dist.destroy_process_group()


def with_parallel_job(tp, dp, pp):
    def decorate(func):
        def run(**kwargs):
            world_size = tp * dp * pp
            mp.spawn(_join, args=(world_size, func, kwargs), nprocs=world_size)

        return run

    return decorate
