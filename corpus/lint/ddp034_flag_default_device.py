"""A `--local_rank` script (torch.distributed.launch) that pins the visible GPU inside
`main` before using the default CUDA device: whether several processes share a node is
not in the code, so only a preview finding."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=0)
    args = parser.parse_args()
    os.environ.update({"CUDA_VISIBLE_DEVICES": "0"})  # expect-preview: DDP034
    dist.init_process_group(backend="nccl")
    model = DDP(nn.Linear(12, 3).cuda())
    optimizer = torch.optim.Adam(model.parameters())
    for _ in range(20):
        loss = model(torch.randn(6, 12).cuda()).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
