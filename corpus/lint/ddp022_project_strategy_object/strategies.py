"""A launch strategy: an object that holds the parsed arguments and sets up the process
group."""
import os

import torch
import torch.distributed as dist


class EnvStrategy:
    """Honours `--local_rank` when a launcher passes it, else reads LOCAL_RANK."""

    def __init__(self, args):
        self.args = args

    def setup(self):
        if self.args.local_rank != -1:
            os.environ["LOCAL_RANK"] = str(self.args.local_rank)
        local_rank = int(os.environ.get("LOCAL_RANK", "-1"))
        if local_rank != -1:
            torch.cuda.set_device(local_rank)
        dist.init_process_group("nccl")

