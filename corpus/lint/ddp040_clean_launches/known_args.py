"""Parses leniently: an option it does not know is left in the rest."""

import argparse
import os

import torch
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=10)
args, _unknown = parser.parse_known_args()
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
