"""Loaded by every Python process of a ``bench/gpu_check.py`` run (it is on PYTHONPATH there):
in torchrun workers, put the corpus scripts' tensors on this rank's GPU and (``nccl``) their
collectives on NCCL, without editing the scripts. ``gloo-cuda`` keeps gloo, so that ranks may
share one GPU."""

import os

_MODE = os.environ.get("GUARDS_GPU_CHECK")
if _MODE in ("nccl", "gloo-cuda") and "LOCAL_RANK" in os.environ:
    import torch

    _local = int(os.environ["LOCAL_RANK"]) % max(1, torch.cuda.device_count())
    torch.cuda.set_device(_local)
    torch.set_default_device(f"cuda:{_local}")

if _MODE == "nccl" and "LOCAL_RANK" in os.environ:
    import torch.distributed as dist
    from torch.distributed import distributed_c10d

    _original = dist.init_process_group

    def _init_on_nccl(backend=None, *args, **kwargs):
        return _original("nccl", *args, **kwargs)

    dist.init_process_group = _init_on_nccl
    distributed_c10d.init_process_group = _init_on_nccl
