"""Activation dumps for debugging: the hook is defined before the rank test, so every
rank that registers it writes the same files."""

import functools
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class ActivationTracer:
    """Saves module outputs of one step for offline inspection."""

    def register_dumps(self, model, step, micro_batch, folder):
        def dump(name, module, inputs, output):
            path = os.path.join(folder, f"{name}_step{step}.pt")
            torch.save(output.detach().cpu(), path)  # expect: DDP013

        return [
            module.register_forward_hook(functools.partial(dump, name))
            for name, module in model.named_modules()
        ]


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(nn.Linear(8, 8).cuda(), device_ids=[local_rank])
    handles = ActivationTracer().register_dumps(model.module, 0, 0, "dumps")
    model(torch.randn(4, 8, device="cuda")).sum().backward()
    for handle in handles:
        handle.remove()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
