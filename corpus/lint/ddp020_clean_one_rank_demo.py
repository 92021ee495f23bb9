"""A checkpoint helper module with a `__main__` demo: the demo starts a process group of
one rank (`world_size=1`) to exercise the helper, so `.cuda()` there is the only process's
own GPU 0."""

import os

import torch
import torch.distributed as dist
from torch import nn


def save_for_resume(model, optimizer, step, path):
    if dist.get_rank() == 0:
        tmp = f"{path}.tmp"
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step}, tmp)
        os.replace(tmp, path)
    dist.barrier()


def load_for_resume(model, optimizer, path):
    state = torch.load(path, map_location="cpu")
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    return state["step"]


if __name__ == "__main__":
    os.environ.setdefault("MASTER_ADDR", "localhost")
    os.environ.setdefault("MASTER_PORT", "29531")
    dist.init_process_group("nccl", rank=0, world_size=1)
    net = nn.Sequential(nn.Linear(10, 5), nn.ReLU(), nn.Linear(5, 1)).cuda()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    save_for_resume(net, opt, 7, "/tmp/demo_resume.pt")
    again = nn.Sequential(nn.Linear(10, 5), nn.ReLU(), nn.Linear(5, 1)).cuda()
    assert load_for_resume(again, torch.optim.SGD(again.parameters(), lr=0.1), "/tmp/demo_resume.pt") == 7
    dist.destroy_process_group()
