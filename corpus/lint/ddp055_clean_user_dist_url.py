"""ImageNet-style launcher: the rendezvous URL is the user's (`--dist-url`), whatever
scheme they choose, and a Windows template path is left for them to fill in."""
import argparse
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def worker(gpu, args):
    if sys.platform == "win32":
        init_method = "file:///{your local file path}"
    else:
        init_method = args.dist_url
    dist.init_process_group(backend=args.backend, init_method=init_method, world_size=args.gpus, rank=gpu)
    value = torch.tensor([float(gpu)])
    dist.all_reduce(value)
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--dist-url", default="tcp://127.0.0.1:23456")
    parser.add_argument("--backend", default="gloo")
    parser.add_argument("--gpus", type=int, default=2)
    args = parser.parse_args()
    mp.spawn(worker, args=(args,), nprocs=args.gpus)
