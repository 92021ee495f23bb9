"""Loaded by every Python process of a ``bench/gpu_check.py`` run (it is on PYTHONPATH there):
in torchrun workers, put the corpus scripts on NCCL and their tensors on this rank's GPU,
without editing the scripts."""

import os

if os.environ.get("GUARDS_GPU_CHECK") == "nccl" and "LOCAL_RANK" in os.environ:
    import torch
    import torch.distributed as dist
    from torch.distributed import distributed_c10d

    _local = int(os.environ["LOCAL_RANK"]) % max(1, torch.cuda.device_count())
    torch.cuda.set_device(_local)
    torch.set_default_device(f"cuda:{_local}")
    _original = dist.init_process_group

    def _init_on_nccl(backend=None, *args, **kwargs):
        return _original("nccl", *args, **kwargs)

    dist.init_process_group = _init_on_nccl
    distributed_c10d.init_process_group = _init_on_nccl
