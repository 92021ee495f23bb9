"""Start-up of a tensor-parallel trainer, in the style of Megatron's initialisation: the
process picks its GPU from its rank (`torch.cuda.set_device`) before it joins the group,
whichever of the two ways it joins (DeepSpeed's helper or a plain `init_process_group`),
and the fused-kernel warm-up that runs later allocates on the default device, which is
then this rank's own GPU."""

import os
from datetime import timedelta

import deepspeed
import torch

from trainer_state import get_config


def start_up(allow_cpu_only=False):
    if not allow_cpu_only:
        assert torch.cuda.is_available(), "this trainer needs CUDA"
    _join_job()
    _warm_up_fused_bias_gelu()


def _join_job():
    cfg = get_config()
    gpus = torch.cuda.device_count()
    if torch.distributed.is_initialized():
        cfg.rank = torch.distributed.get_rank()
        cfg.world_size = torch.distributed.get_world_size()
    else:
        if gpus > 0:
            gpu = cfg.rank % gpus
            if cfg.local_rank is None:
                cfg.local_rank = gpu
            elif cfg.local_rank != gpu:
                raise ValueError("local rank must equal rank % number of GPUs")
            torch.cuda.set_device(gpu)
        if cfg.use_deepspeed:
            deepspeed.init_distributed(cfg.backend)
        else:
            address = os.getenv("MASTER_ADDR", "localhost")
            port = os.getenv("MASTER_PORT", "6000")
            torch.distributed.init_process_group(
                backend=cfg.backend,
                init_method=f"tcp://{address}:{port}",
                world_size=cfg.world_size,
                rank=cfg.rank,
                timeout=timedelta(minutes=cfg.timeout_minutes),
            )


def _warm_up_fused_bias_gelu():
    cfg = get_config()
    dtype = torch.bfloat16 if cfg.bf16 else torch.float16
    for _ in range(3):
        x = torch.rand((cfg.seq_length, cfg.micro_batch, cfg.ffn_hidden), dtype=dtype, device="cuda")
        bias = torch.rand(cfg.ffn_hidden, dtype=dtype, device="cuda")
        torch.nn.functional.gelu(x + bias)
    torch.cuda.synchronize()
