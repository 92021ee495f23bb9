"""Evaluates each new checkpoint as training writes it, polling the folder: the loader is
built with training=False, so its sampler does not shuffle."""
import glob
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import TensorDataset

from data import build_dataloader


@torch.no_grad()
def score(model, loader, local_rank):
    totals = torch.zeros(2, device=torch.device("cuda", local_rank))
    for x, y in loader:
        totals[0] += nn.functional.mse_loss(model(x.cuda(local_rank)), y.cuda(local_rank), reduction="sum")
        totals[1] += len(y)
    dist.all_reduce(totals)
    return (totals[0] / totals[1]).item()


def main(folder="checkpoints"):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    test_set = TensorDataset(torch.randn(1000, 12), torch.randn(1000, 1))
    _, loader, _ = build_dataloader(test_set, 50, training=False)
    model = nn.Linear(12, 1).cuda(local_rank)
    done = set()
    while True:
        fresh = sorted(set(glob.glob(f"{folder}/*.pt")) - done)
        if not fresh:
            time.sleep(30)
            continue
        state = torch.load(fresh[0], map_location=f"cuda:{local_rank}")
        model.load_state_dict(state)
        loss = score(model, loader, local_rank)
        if dist.get_rank() == 0:
            print(fresh[0], loss)
        done.add(fresh[0])


if __name__ == "__main__":
    main()
