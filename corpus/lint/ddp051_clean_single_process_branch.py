"""A script that trains with DDP under torchrun and also runs as one process: the stale
export is deleted only in the single-process branch, and under torchrun on rank 0."""

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    distributed = "WORLD_SIZE" in os.environ
    if distributed:
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        dist.init_process_group("nccl")
    else:
        local_rank = 0
        if os.path.exists("export/model.onnx"):
            os.remove("export/model.onnx")
    model = torch.nn.Linear(8, 2).cuda(local_rank)
    if distributed:
        model = DDP(model, device_ids=[local_rank])
        if dist.get_rank() == 0 and os.path.exists("export/model.onnx"):
            os.remove("export/model.onnx")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(10):
        loss = model(torch.randn(4, 8, device=f"cuda:{local_rank}")).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
