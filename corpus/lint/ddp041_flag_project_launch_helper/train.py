"""The project's `launch` helper spawns the workers; the seed stays in the parent."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

from utils.launcher import launch


def main_worker(rank, args):
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29512", rank=rank,
                            world_size=args.gpus)
    torch.cuda.set_device(rank)
    model = DDP(nn.Linear(32, 32).cuda(rank), device_ids=[rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(100):
        x = torch.ones(8, 32, device=f"cuda:{rank}")
        loss = model(x).abs().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--gpus", type=int, default=torch.cuda.device_count())
    args = parser.parse_args()
    torch.manual_seed(args.seed)  # expect: DDP041
    launch(main_worker, args.gpus, args=(args,))


if __name__ == "__main__":
    main()
