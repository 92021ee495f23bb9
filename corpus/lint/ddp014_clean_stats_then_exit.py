"""Throughput benchmark: after a fixed number of logged intervals, rank 0 writes the
collected loss and speed figures once and the script ends (`quit()`): the loop never comes
round to write the file again."""

import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--log-every", type=int, default=20)
    parser.add_argument("--intervals", type=int, default=5)
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(nn.Linear(256, 256).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    figures = {"step": [], "loss": [], "samples_per_s": []}
    start = time.time()
    step = 0
    while True:
        x = torch.randn(64, 256, device="cuda")
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        step += 1
        if step % args.log_every == 0:
            elapsed, start = time.time() - start, time.time()
            figures["step"].append(step)
            figures["loss"].append(loss.item())
            figures["samples_per_s"].append(64 * args.log_every * dist.get_world_size() / elapsed)
            if len(figures["step"]) == args.intervals:
                if dist.get_rank() == 0:
                    torch.save(figures, f"throughput_{dist.get_world_size()}gpu.pt")
                dist.destroy_process_group()
                quit()


if __name__ == "__main__":
    main()
