"""Values kept on the main process and read only there, a name bound in the
single-process branch and read there, and a read guarded by a NameError handler."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=100)
    args = parser.parse_args()
    distributed = "WORLD_SIZE" in os.environ
    if distributed:
        dist.init_process_group(backend="nccl")
        rank = dist.get_rank()
        local_rank = int(os.environ["LOCAL_RANK"])
    else:
        rank, local_rank = 0, 0
    torch.cuda.set_device(local_rank)
    model = nn.Linear(10, 1).cuda()
    if distributed:
        model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

    if rank == 0:
        history = []
        log = open("train.log", "w")
    for step in range(args.steps):
        loss = model(torch.randn(4, 10, device="cuda")).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if rank == 0:
            history.append(loss.item())
            log.write(f"{step} {loss.item():.5f}\n")
    if rank != 0:
        return
    log.close()
    print(f"final loss {history[-1]:.5f}")


if __name__ == "__main__":
    main()
