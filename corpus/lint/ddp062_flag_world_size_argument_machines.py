"""A detector trainer configured by a YAML file that names how many machines to use and
which one this is; the process group is formed over all of them, at this machine's own
address."""
import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import yaml
from torch.nn.parallel import DistributedDataParallel as DDP


def launch(local_rank, cfg):
    os.environ["MASTER_ADDR"] = "localhost"  # expect: DDP062
    os.environ["MASTER_PORT"] = str(cfg["port"])
    dist.init_process_group(
        "nccl",
        world_size=cfg["gpus_per_machine"] * cfg["num_machines"],
        rank=cfg["machine_rank"] * cfg["gpus_per_machine"] + local_rank,
    )
    torch.cuda.set_device(local_rank)
    head = nn.Sequential(nn.Conv2d(256, 256, 3, padding=1), nn.ReLU(), nn.Conv2d(256, 80 + 4, 1))
    model = DDP(head.cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    for _ in range(cfg["iterations"]):
        features = torch.randn(4, 256, 64, 64, device=local_rank)
        loss = model(features).abs().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    with open(sys.argv[1]) as handle:
        cfg = yaml.safe_load(handle)
    mp.spawn(launch, args=(cfg,), nprocs=cfg["gpus_per_machine"])
