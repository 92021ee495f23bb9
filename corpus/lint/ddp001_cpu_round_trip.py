"""Offloading quantized weights: bitsandbytes quantizes a weight when it moves to a GPU,
and the result goes straight back to the CPU (`.to(0).to("cpu")`): nothing stays on
GPU 0, so no two ranks fill it. A value left there (`.to(0).half()`) is a device choice,
and every rank of the job `load_for_training` joins makes the same one."""

import torch
import torch.distributed as dist


def offload_quantized(param_cls, value, keep_on_gpu=False):
    if dist.is_initialized():
        dist.barrier()
    quantized = param_cls(value, requires_grad=False).to(0).to("cpu")
    scales = value.abs().amax(dim=-1).cuda(0).cpu()
    moved = value.to(0).to(torch.device("cpu"))
    if keep_on_gpu:
        resident = value.to(0).half()  # expect: DDP001
        return quantized, scales, moved, resident
    return quantized, scales, moved


def load_for_training(param_cls, weights):
    dist.init_process_group("nccl")
    return [offload_quantized(param_cls, w, keep_on_gpu=True) for w in weights]
