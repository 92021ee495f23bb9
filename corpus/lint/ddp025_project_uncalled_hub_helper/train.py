"""Every rank loads the backbone through the project helper at once (torch.hub extracts
the repository into one shared folder); the uncalled hub helper next to it runs nowhere."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn

from hub_utils import load_backbone_weights, wrap


def main(steps=100):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = load_backbone_weights(nn.Linear(16, 4))  # expect: DDP025
    model = wrap(model.cuda(local_rank), local_rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(steps):
        optimizer.zero_grad()
        model(torch.randn(8, 16, device=local_rank)).sum().backward()
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
