"""Every rank resumes, each load naming where the tensors go: a lambda keeping them on
the CPU, "cpu", this process's device, and a dict remapping the saving GPU."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

CKPT = "work_dirs/last.pth"
EMA = "work_dirs/ema.pth"


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)
    dist.init_process_group("nccl")
    model = DDP(nn.Linear(32, 32).to(device), device_ids=[local_rank])
    ema = nn.Linear(32, 32).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if os.path.isfile(CKPT):
        state = torch.load(CKPT, map_location=lambda storage, loc: storage)
        model.module.load_state_dict(state["model"])
        optimizer.load_state_dict(torch.load(CKPT, "cpu")["optim"])
        ema.load_state_dict(torch.load(EMA, map_location=device))
        remap = {"cuda:0": f"cuda:{local_rank}"}
        model.module.load_state_dict(torch.load(CKPT, map_location=remap)["model"])
    for _ in range(100):
        loss = model(torch.randn(8, 32, device=device)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    if dist.get_rank() == 0:
        torch.save({"model": model.module.state_dict(), "optim": optimizer.state_dict()},
                   CKPT + ".tmp")
        os.replace(CKPT + ".tmp", CKPT)
        torch.save(ema.state_dict(), EMA + ".tmp")
        os.replace(EMA + ".tmp", EMA)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
