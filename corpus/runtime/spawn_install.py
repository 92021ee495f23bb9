"""guards.install() inside torch.multiprocessing.spawn workers, before init_process_group."""

import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def worker(rank, world, port, faulty):
    import guards

    guards.install()
    guards.install()  # idempotent
    address = f"tcp://127.0.0.1:{port}"
    dist.init_process_group("gloo", init_method=address, rank=rank, world_size=world)
    t = torch.ones(4)
    dist.all_reduce(t)
    if faulty and rank == 1:
        dist.broadcast(t, src=0)  # line:broadcast
    else:
        dist.all_reduce(t)  # line:reduce
    dist.destroy_process_group()


if __name__ == "__main__":
    faulty = sys.argv[2] == "fault"
    mp.spawn(worker, args=(2, int(sys.argv[1]), faulty), nprocs=2)
    print("spawn done", flush=True)
