"""Point-cloud segmentation trainer: one process per GPU, the rendezvous URL a constant of
the module on a shared file system."""
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

DIST_URL = "file:///mnt/shared/segmentation/dist_init"


def run(gpu, ngpus, epochs):
    dist.init_process_group(backend="nccl", init_method=DIST_URL, world_size=ngpus, rank=gpu)  # expect: DDP055
    torch.cuda.set_device(gpu)
    model = DDP(nn.Conv1d(6, 13, 1).cuda(gpu), device_ids=[gpu])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for _ in range(epochs):
        points = torch.randn(8, 6, 4096, device=f"cuda:{gpu}")
        labels = torch.randint(0, 13, (8, 4096), device=f"cuda:{gpu}")
        loss = nn.functional.cross_entropy(model(points), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    ngpus = torch.cuda.device_count()
    mp.spawn(run, args=(ngpus, int(os.environ.get("EPOCHS", "100"))), nprocs=ngpus)
