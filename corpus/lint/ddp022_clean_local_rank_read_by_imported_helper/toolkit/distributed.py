import torch
import torch.distributed as dist

from toolkit.runtime import launcher_local_rank


def setup_distributed(fallback_local_rank):
    """Join the process group; the launcher's LOCAL_RANK wins over the option."""
    local_rank = launcher_local_rank(fallback_local_rank)
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    return torch.device("cuda", local_rank)
