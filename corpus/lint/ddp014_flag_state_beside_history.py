"""Twin of the history log: the same per-epoch file also carries the model and optimizer
state, and the run resumes from it, so a crash mid-write loses the last good checkpoint.
A data-like name (`outputs`) does not hide what the object holds."""

import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(nn.Linear(32, 8).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    history = {"epoch": [], "train_loss": []}
    start = 0
    if os.path.exists("run/outputs.pt"):
        outputs = torch.load("run/outputs.pt", map_location="cpu")
        model.module.load_state_dict(outputs["model"])
        optimizer.load_state_dict(outputs["optimizer"])
        history, start = outputs["history"], outputs["history"]["epoch"][-1] + 1
    for epoch in range(start, 30):
        x = torch.randn(16, 32, device="cuda")
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if dist.get_rank() == 0:
            history["epoch"].append(epoch)
            history["train_loss"].append(loss.item())
            outputs = {
                "model": model.module.state_dict(),
                "optimizer": optimizer.state_dict(),
                "history": history,
            }
            torch.save(outputs, "run/outputs.pt")  # expect: DDP014
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
