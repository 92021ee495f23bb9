"""A builtin comm hook (FP16 compression in C++) registered before training: exit 0.

With an output path, rank 0 saves the final parameters (guarded vs plain: bit-identical).
"""

import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
model = DDP(torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1)))
model._register_builtin_comm_hook(dist.BuiltinCommHookType.FP16_COMPRESS)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
data = torch.Generator().manual_seed(rank)
for _ in range(10):
    loss = model(torch.randn(4, 8, generator=data)).square().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
if rank == 0 and len(sys.argv) > 1:
    torch.save(model.module.state_dict(), sys.argv[1])
print(f"rank {rank} builtin hook done")
dist.destroy_process_group()
