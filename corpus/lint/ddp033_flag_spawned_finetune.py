"""Fine-tuning started with mp.spawn: the worker resumes from its own `best_model.pt`
(saved from the GPU by rank 0) without `map_location`, and loads a pretrained backbone
whose origin the script does not show (only a preview finding)."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

BEST = "output/best_model.pt"


def worker(gpu, args):
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29511",
                            rank=gpu, world_size=args.gpus)
    torch.cuda.set_device(gpu)
    backbone = nn.Sequential(nn.Linear(128, 256), nn.GELU(), nn.Linear(256, 128))
    if args.pretrained:
        backbone.load_state_dict(torch.load(args.pretrained))  # expect-preview: DDP033
    model = DDP(nn.Sequential(backbone, nn.Linear(128, 5)).cuda(gpu), device_ids=[gpu])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    if args.resume:
        model.module.load_state_dict(torch.load(BEST))  # expect: DDP033
    best = float("inf")
    for step in range(args.steps):
        x = torch.randn(32, 128, device=gpu)
        loss = model(x).logsumexp(dim=1).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if dist.get_rank() == 0:
            if loss.item() < best:
                best = loss.item()
                torch.save(model.module.state_dict(), BEST + ".tmp")
                os.replace(BEST + ".tmp", BEST)
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpus", type=int, default=4)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--pretrained", default="")
    parser.add_argument("--resume", action="store_true")
    args = parser.parse_args()
    mp.spawn(worker, args=(args,), nprocs=args.gpus)
