"""DDP training while one guard component fails on rank 1 (fault injection, white-box).

    guard_fault.py COMPONENT OUT

COMPONENT is wrappers, ddp-hook, step-hook or hashing: that component of the guard raises from its
fourth call on rank 1. The guard must turn itself off on that rank with one ``[guards] disabled``
line, and training must end exactly as without the guard (rank 0 saves the parameters to OUT).
"""

import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def inject(component: str) -> None:
    import guards.hooks.collectives
    import guards.hooks.ddp
    import guards.hooks.params

    owner, name = {
        "wrappers": (guards.hooks.collectives, "site_of"),
        "ddp-hook": (guards.hooks.ddp, "dtype_code"),
        "step-hook": (guards.hooks.params.ParamChecker, "_models_of"),
        "hashing": (guards.hooks.params, "hash_all"),
    }[component]
    original = getattr(owner, name)
    calls = [0]

    def broken(*args, **kwargs):
        calls[0] += 1
        if calls[0] > 3:
            raise RuntimeError(f"injected fault in {component}")
        return original(*args, **kwargs)

    setattr(owner, name, broken)


component, out = sys.argv[1], sys.argv[2]
dist.init_process_group("gloo")
rank = dist.get_rank()
if rank == 1 and "guards.agent.runtime" in sys.modules:
    inject(component)
torch.manual_seed(0)
model = DDP(torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1)))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
data = torch.Generator().manual_seed(rank)
scale = torch.ones(1)
for _ in range(20):
    loss = model(torch.randn(4, 8, generator=data)).square().mean() * scale
    opt.zero_grad()
    loss.backward()
    opt.step()
    total = loss.detach().clone()
    dist.all_reduce(total)
    work = dist.all_reduce(scale.clone(), async_op=True)
    work.wait()
    dist.broadcast(scale, src=0)
if rank == 0:
    torch.save(model.module.state_dict(), out)
print(f"rank {rank} trained {component}")
dist.destroy_process_group()
