"""Process-group helpers shared by the training scripts."""
import os

import torch
import torch.distributed as dist


def setup_ddp(backend="nccl"):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "12355"  # expect: DDP061
    dist.init_process_group(backend)
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    return local_rank


def cleanup():
    dist.destroy_process_group()
