"""A trainer that stops when the loss turns non-finite: the rank that sees it dumps the
batch and the weights, then raises. The loss is this rank's own, so whether several
ranks write the dump at the same moment depends on the data: an unproven finding."""

import math
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def step(model, optimizer, x, y, out_dir):
    loss = nn.functional.mse_loss(model(x), y)
    if not math.isfinite(loss.item()):
        torch.save({"x": x.cpu(), "y": y.cpu()}, os.path.join(out_dir, "bad_batch.pt"))
        torch.save(model.module.state_dict(), os.path.join(out_dir, "bad_weights.pt"))
        raise FloatingPointError(f"non-finite loss; batch and weights saved in {out_dir}")
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


def main(out_dir="runs/regression", epochs=50):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    table = torch.load("table.pt")
    dataset = TensorDataset(table["x"], table["y"])
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, batch_size=256, sampler=sampler)
    model = DDP(nn.Linear(20, 1).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            step(model, optimizer, x.cuda(), y.cuda(), out_dir)  # expect-preview: DDP013
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
