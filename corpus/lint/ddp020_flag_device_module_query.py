"""The device module is only asked how many devices there are: nothing sets this rank's
device, so every rank's bare "cuda" is GPU 0."""

import torch
import torch.distributed as dist


def device_module(kind):
    return getattr(torch, kind)


def main(model, batches, kind="cuda"):
    dist.init_process_group("nccl")
    print(f"{device_module(kind).device_count()} devices")
    model = model.cuda()  # expect: DDP020
    for x in batches:
        model(x.to("cuda"))  # expect: DDP020
