"""Two guard versions in one job: rank 1 runs a guard whose protocol version is one higher, as
another guards installation on another node would. Each rank must turn its guard off with one
line, and the training must complete as without the guard."""

import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP


def worker(rank, world, port):
    import guards
    from guards.protocol import wire

    if rank == 1:
        wire.VERSION += 1
    guards.install()
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(4, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(20):
        opt.zero_grad()
        model(torch.randn(8, 4)).sum().backward()
        opt.step()
    dist.destroy_process_group()
    print(f"rank {rank} trained", flush=True)


if __name__ == "__main__":
    mp.spawn(worker, args=(2, int(sys.argv[1])), nprocs=2)
