"""The distributed training job: one process per GPU under torchrun."""
import os

import torch
import torch.distributed as dist

from utility.models import build_model


def main(steps=1000):
    dist.init_process_group("nccl")
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    model = build_model(torch.device("cuda", rank), distributed=True, rank=rank)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(steps):
        loss = model(torch.randn(32, 6, device=rank)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
