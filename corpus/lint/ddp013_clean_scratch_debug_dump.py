"""When a step produces non-finite values, the offending tensor is dumped to the machine's
temporary folder for inspection: a debugging aid on the rank that saw it, not a checkpoint."""
import os
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def dump_for_debugging(name, tensor):
    scratch = Path("/tmp") / "nonfinite"
    scratch.mkdir(exist_ok=True)
    target = scratch / f"{name}.pt"
    try:
        torch.save(tensor.detach().cpu(), target)
    except OSError as error:
        print(f"could not write {target}: {error}")


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(nn.Linear(256, 256).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-4)
    for step in range(10000):
        out = model(torch.randn(64, 256, device="cuda"))
        loss = out.square().mean()
        optimizer.zero_grad()
        loss.backward()
        for name, weight in model.module.named_parameters():
            if weight.grad is not None and not torch.isfinite(weight.grad).all():
                dump_for_debugging(f"grad_{name}_step{step}", weight.grad)
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
