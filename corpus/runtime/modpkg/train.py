"""A module entry point: relative import, argv and __name__ as with `python -m`."""

import sys

import torch
import torch.distributed as dist

from .util import SCALE

assert __name__ == "__main__", __name__
dist.init_process_group("gloo")
t = torch.ones(2) * SCALE
dist.all_reduce(t)
print(f"module rank {dist.get_rank()} argv {sys.argv[1:]} sum {t.sum().item()}", flush=True)
dist.destroy_process_group()
