"""Joins the job, then pins this process to its GPU."""
import os

import torch

import comm


def setup():
    comm.start_job()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    return local_rank
