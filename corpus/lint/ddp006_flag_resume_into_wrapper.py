"""Saves the wrapper's state dict and resumes by loading it back into the wrapper with
strict=False: the finding stands, but its fix is unsafe (after it, the resume would
silently load nothing)."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def resume(model, path):
    if os.path.exists(path):
        state = torch.load(path, map_location="cpu")
        model.load_state_dict(state["model"], strict=False)


def main(epochs=3, path="last.pt"):
    dist.init_process_group("gloo")
    model = DDP(nn.Linear(10, 2))
    resume(model, path)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(epochs):
        loss = model(torch.randn(8, 10)).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if dist.get_rank() == 0:
            torch.save({"model": model.state_dict()}, path + ".tmp")  # expect: DDP006
            os.replace(path + ".tmp", path)
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
