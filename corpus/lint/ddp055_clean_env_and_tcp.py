"""Launched by torchrun (env://) or, for a quick local test, spawned with a TCP address."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def check_allreduce(rank, world_size, port):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world_size)
    value = torch.ones(1)
    dist.all_reduce(value)
    assert value.item() == world_size
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local-test", action="store_true")
    args = parser.parse_args()
    if args.local_test:
        mp.spawn(check_allreduce, args=(2, 29511), nprocs=2)
        return
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    dist.init_process_group("nccl", init_method="env://")
    value = torch.ones(1, device="cuda")
    dist.all_reduce(value)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
