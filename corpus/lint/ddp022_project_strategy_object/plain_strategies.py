"""A launch strategy that trusts the `--local_rank` argument."""
import torch
import torch.distributed as dist


class ArgStrategy:
    """Takes the device from `--local_rank` alone."""

    def __init__(self, args):
        self.args = args

    def setup(self):
        torch.cuda.set_device(self.args.local_rank)
        dist.init_process_group("nccl")
