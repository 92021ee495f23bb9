"""A face-recognition trainer configured by Python config modules. The full training state
of each rank is written only under a setting that every config of the project leaves off:
the overwrite happens on no documented run (unproven)."""

import importlib
import os
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main(config_name, backbone, loader):
    cfg = importlib.import_module(f"configs.{config_name}").config
    dist.init_process_group("nccl")
    rank, local_rank = dist.get_rank(), int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    backbone = DDP(backbone.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(backbone.parameters(), lr=cfg.lr)
    start = 0
    state_path = os.path.join(cfg.output, f"state_rank{rank}.pt")
    if cfg.resume:
        state = torch.load(state_path, map_location="cpu")
        backbone.module.load_state_dict(state["backbone"])
        optimizer.load_state_dict(state["optimizer"])
        start = state["epoch"] + 1
    for epoch in range(start, cfg.epochs):
        for images, labels in loader:
            loss = torch.nn.functional.cross_entropy(backbone(images.cuda()), labels.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if cfg.save_all_states:
            state = {"backbone": backbone.module.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}
            torch.save(state, state_path)  # expect-preview: DDP014
        if rank == 0:
            torch.save(backbone.module.state_dict(), os.path.join(cfg.output, f"backbone_{epoch}.pt"))


if __name__ == "__main__":
    main(sys.argv[1], torch.nn.Linear(512, 512), [])
