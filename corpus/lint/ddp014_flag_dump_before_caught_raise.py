"""On a diverging loss the script saves the weights to `last.pt` and raises; the epoch loop
catches the error, halves the learning rate and carries on, so the next divergence writes
`last.pt` again in place: a crash during that write truncates the file."""

import math
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Diverged(Exception):
    pass


def main(out="runs/backoff", epochs=40):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    blob = torch.load("train.pt")
    dataset = TensorDataset(blob["x"], blob["y"])
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, batch_size=64, sampler=sampler)
    model = DDP(nn.Linear(32, 10).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        try:
            total = 0.0
            for x, y in loader:
                loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                total += loss.item()
            if not math.isfinite(total):
                if dist.get_rank() == 0:
                    torch.save(model.module.state_dict(), os.path.join(out, "last.pt"))  # expect-preview: DDP014
                raise Diverged(f"loss diverged in epoch {epoch}")
        except Diverged:
            for group in optimizer.param_groups:
                group["lr"] *= 0.5
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
