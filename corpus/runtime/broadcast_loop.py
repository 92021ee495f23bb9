"""Broadcast and reduce with default arguments in a loop: identical on every rank, exit 0.

Their defaults (``group_src=None``, ``group_dst=None``) once entered the fingerprint through
``hash(None)``, which differs between processes before Python 3.12.
"""

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
t = torch.zeros(16)
for step in range(20):
    if dist.get_rank() == 0:
        t.fill_(step)
    dist.broadcast(t, src=0)
    assert t[0].item() == step
    dist.reduce(t, dst=0)
print(f"rank {dist.get_rank()} broadcast loop done")
dist.destroy_process_group()
