"""Process-group set-up shared by the pretraining and fine-tuning scripts."""
import os

import torch
import torch.distributed as dist


def setup_distributed():
    if "WORLD_SIZE" not in os.environ:
        return {"ddp": False, "rank": 0, "local_rank": 0, "world_size": 1, "device": "cpu"}
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    return {
        "ddp": True,
        "rank": int(os.environ["RANK"]),
        "local_rank": local_rank,
        "world_size": int(os.environ["WORLD_SIZE"]),
        "device": f"cuda:{local_rank}",
    }
