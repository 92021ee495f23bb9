"""Device selection shared by the segkit scripts."""

import os

import torch


def device_for_this_process():
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local_rank)
    return torch.device("cuda", local_rank)
