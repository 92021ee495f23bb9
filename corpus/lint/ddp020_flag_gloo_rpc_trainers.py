"""A parameter-server demo on RPC over a gloo process group: every trainer moves its
batches to the default CUDA device, so all trainers share GPU 0 (no NCCL involved, so the
message names only that)."""

import os

import torch
import torch.distributed as dist
import torch.distributed.rpc as rpc
import torch.multiprocessing as mp


class ParameterServer:
    def __init__(self):
        self.model = torch.nn.Linear(8, 1)

    def current_model(self):
        return self.model


def batches(count, size):
    for _ in range(count):
        yield torch.randn(size, 8).cuda()  # expect: DDP020


def trainer_loop(server, count=4):
    model = server.rpc_sync().current_model().cuda()  # expect: DDP020
    for batch in batches(count, 16):
        model(batch).sum().backward()


def worker(rank, world_size):
    os.environ.setdefault("MASTER_ADDR", "localhost")
    os.environ.setdefault("MASTER_PORT", "29511")
    dist.init_process_group(backend="gloo", rank=rank, world_size=world_size)
    rpc.init_rpc(f"worker{rank}", rank=rank, world_size=world_size)
    if rank > 0:
        trainer_loop(rpc.remote("worker0", ParameterServer))
    rpc.shutdown()


if __name__ == "__main__":
    mp.spawn(worker, args=(3,), nprocs=3)
