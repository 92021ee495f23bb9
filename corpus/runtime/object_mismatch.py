"""Object collectives out of order: rank 0 broadcasts a config while rank 1 gathers objects."""

import time

import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
print(f"FAULT {time.time()}", flush=True)
if rank == 0:
    dist.broadcast_object_list([{"lr": 0.1}], src=0)  # line:broadcast
else:
    out = [None] * dist.get_world_size()
    dist.all_gather_object(out, {"rank": rank})  # line:gather
