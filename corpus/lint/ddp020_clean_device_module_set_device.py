"""Accelerator-agnostic setup: the device is set through the device module, found with
`torch.get_device_module()` or by name (`getattr(torch, kind)`), so a bare "cuda" later is
this rank's GPU."""

import os

import torch
import torch.distributed as dist


def device_module(kind):
    return getattr(torch, kind)


def setup(kind="cuda"):
    local_rank = int(os.environ["LOCAL_RANK"])
    device_module(kind).set_device(local_rank)
    dist.init_process_group("nccl")


def setup_default():
    torch.get_device_module().set_device(int(os.environ["LOCAL_RANK"]))
    dist.init_process_group("nccl")


def evaluate(model, batches):
    correct = torch.zeros(1, device="cuda")
    for x, y in batches:
        correct += (model(x.cuda()).argmax(-1) == y.cuda()).sum()
    dist.all_reduce(correct)
    return correct.item()
