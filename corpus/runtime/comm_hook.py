"""A user comm hook (fp16 compression) still works, and its buckets are still observed."""

import torch
import torch.distributed as dist
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel as DDP

calls = []


def hook(state, bucket):
    calls.append(bucket.index())
    return default_hooks.fp16_compress_hook(state, bucket)


dist.init_process_group("gloo")
torch.manual_seed(0)
model = DDP(torch.nn.Linear(8, 1))
model.register_comm_hook(dist.group.WORLD, hook)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for _ in range(5):
    model(torch.randn(4, 8)).mean().backward()
    opt.step()
    opt.zero_grad()
assert len(calls) == 5, calls
print(f"hook calls {len(calls)}")
dist.destroy_process_group()
