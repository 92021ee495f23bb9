"""A distributed check of a tensor-parallel layer, started by torchrun on one machine: the
helper pins the rendezvous to `localhost`, so every process of the job runs on this
machine, where the global rank is the GPU index."""
import os

import torch
import torch.distributed as dist


def setup(rank, world_size, port="29511"):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = port
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    torch.cuda.set_device(rank)


def check_column_parallel(rank, world_size):
    setup(rank, world_size)
    device = torch.device(f"cuda:{rank}")
    torch.manual_seed(0)
    full = torch.randn(64, 32, device=device)
    shard = full.chunk(world_size, dim=0)[rank]
    x = torch.randn(8, 32, device=device)
    out = x @ shard.t()
    gathered = [torch.empty_like(out) for _ in range(world_size)]
    dist.all_gather(gathered, out)
    torch.testing.assert_close(torch.cat(gathered, dim=1), x @ full.t())
    dist.destroy_process_group()


if __name__ == "__main__":
    check_column_parallel(int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1)))
