"""Process-group starts for the tests: one that makes a group of one rank in the test
process, and one that joins the group a launcher set up."""

import os

import torch.distributed as dist


def start_single_rank():
    if not dist.is_initialized():
        os.environ["RANK"] = "0"
        os.environ["WORLD_SIZE"] = "1"
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29561")
        dist.init_process_group("nccl")


def join_launched_group():
    dist.init_process_group("nccl")
