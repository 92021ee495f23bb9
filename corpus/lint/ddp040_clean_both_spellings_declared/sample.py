"""Distributed sampling; run.sh starts it with the old launcher. The parser declares both
spellings of the option in two calls, so torch 2's `--local-rank=N` is accepted too."""

import argparse

import torch
import torch.distributed as dist


def parse():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=250)
    parser.add_argument("--local_rank", default=-1, type=int)  # expect-preview: DDP022
    parser.add_argument("--local-rank", default=-1, type=int)  # expect-preview: DDP022
    return parser.parse_args()


def main():
    args = parse()
    torch.cuda.set_device(args.local_rank)
    dist.init_process_group("nccl")
    noise = torch.randn(64, 3, 32, 32, device=f"cuda:{args.local_rank}")
    for _ in range(args.steps):
        noise = noise - 0.01 * noise
    samples = [torch.empty_like(noise) for _ in range(dist.get_world_size())]
    dist.all_gather(samples, noise)
    if dist.get_rank() == 0:
        torch.save(torch.cat(samples).cpu(), "samples.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
