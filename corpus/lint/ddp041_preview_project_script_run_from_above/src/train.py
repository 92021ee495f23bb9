"""An ImageNet trainer in the style of the PyTorch examples: a seed is set before the
workers are spawned only when `--seed` is given. The project's one command lives in
`scripts/large/run.sh`, run from this folder (`bash scripts/large/run.sh`), and does not
give it: no documented run seeds (unproven)."""

import argparse
import random

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def main_worker(gpu, ngpus, args):
    dist.init_process_group("nccl", init_method=args.dist_url, rank=gpu, world_size=ngpus)
    torch.cuda.set_device(gpu)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True)
    parser.add_argument("--seed", default=None, type=int)
    parser.add_argument("--dist-url", default="tcp://127.0.0.1:23456")
    args = parser.parse_args()
    if args.seed is not None:
        random.seed(args.seed)  # expect-preview: DDP041
        torch.manual_seed(args.seed)
    ngpus = torch.cuda.device_count()
    mp.spawn(main_worker, nprocs=ngpus, args=(ngpus, args))


if __name__ == "__main__":
    main()
