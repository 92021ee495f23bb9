"""Three ranks all_gather tensors of different lengths: gloo aborts a receiving process on the
size mismatch, which must still be reported as the mismatch it is."""

import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
dist.all_reduce(torch.ones(1))
n = rank + 1
out = [torch.zeros(n) for _ in range(dist.get_world_size())]
print(f"FAULT {time.time()}", flush=True)
dist.all_gather(out, torch.ones(n))  # line:gather
