"""Process-group helpers: start-up from the launcher's environment, rank queries that
also answer in a plain single-process run, and a rank-0 checkpoint writer."""
import os
import sys

import torch
import torch.distributed as dist


def distributed_ready():
    if not dist.is_available():  # a build without distributed support
        return False
    return dist.is_initialized()


def world_size():
    if distributed_ready():
        return dist.get_world_size()
    return 1


def rank():
    if distributed_ready():
        return dist.get_rank()
    return 0


def is_rank_zero():
    return rank() == 0


def mute_unless(verbose):
    """Ranks other than 0 send their prints to nowhere; rank 0 keeps the console."""
    if not verbose:
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the process


def start(cfg):
    """Join the process group described by torchrun or SLURM; leave `cfg.distributed`
    False when neither launched us."""
    env = os.environ
    if "RANK" in env and "WORLD_SIZE" in env:
        cfg.rank, cfg.world_size = int(env["RANK"]), int(env["WORLD_SIZE"])
        cfg.gpu = int(env["LOCAL_RANK"])
    elif "SLURM_PROCID" in env:
        cfg.rank = int(env["SLURM_PROCID"])
        cfg.gpu = cfg.rank % torch.cuda.device_count()
    else:
        print("single process: no launcher environment found")
        cfg.distributed = False
        return
    cfg.distributed = True
    torch.cuda.set_device(cfg.gpu)
    print(f"rank {cfg.rank} joining via {cfg.dist_url}", flush=True)
    dist.init_process_group(
        "nccl", init_method=cfg.dist_url, world_size=cfg.world_size, rank=cfg.rank
    )
    dist.barrier()
    mute_unless(cfg.rank == 0)


def write_checkpoint(state, target):
    """Rank 0 writes `state` next to `target`, then renames it into place."""
    if not is_rank_zero():
        return
    staging = f"{target}.writing"
    torch.save(state, staging)
    os.replace(staging, target)


def mean_over_ranks(named):
    """The same dict with each tensor averaged over all ranks (keys in sorted order, so
    every rank stacks them alike)."""
    n = world_size()
    if n == 1:
        return named
    keys = sorted(named)
    with torch.no_grad():
        stacked = torch.stack([named[k] for k in keys])
        dist.all_reduce(stacked)
        stacked /= n
    return dict(zip(keys, stacked))
