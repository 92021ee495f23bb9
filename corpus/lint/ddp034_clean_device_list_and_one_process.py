"""The job's GPUs listed for the whole node ("0,1,2,3"), and a single GPU pinned only on
the path that runs without distribution."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

os.environ["CUDA_VISIBLE_DEVICES"] = "0,1,2,3"


def main():
    distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1
    if distributed:
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        dist.init_process_group("nccl")
        model = DDP(nn.Linear(8, 2).cuda(), device_ids=[local_rank])
    else:
        os.environ["CUDA_VISIBLE_DEVICES"] = "0"
        model = nn.Linear(8, 2).cuda()
    optimizer = torch.optim.Adam(model.parameters())
    for _ in range(10):
        loss = model(torch.randn(4, 8, device="cuda")).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
