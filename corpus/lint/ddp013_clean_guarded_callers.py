"""An export helper only ever called on rank 0, a single-process debug path, and an
in-memory buffer every rank builds."""
import io
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def export(model, path):
    torch.save({"weights": model.state_dict(), "format": 2}, path)


def state_bytes(model):
    buffer = io.BytesIO()
    torch.save(model.state_dict(), buffer)
    return buffer.getvalue()


def main():
    distributed = "LOCAL_RANK" in os.environ
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local_rank)
    if distributed:
        dist.init_process_group("nccl")
    rank = dist.get_rank() if distributed else 0
    blob = torch.load("train.pt")
    dataset = TensorDataset(blob["x"], blob["y"])
    net = nn.Linear(16, 2).cuda(local_rank)
    model = DDP(net, device_ids=[local_rank]) if distributed else net
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    sampler = DistributedSampler(dataset, drop_last=True) if distributed else None
    loader = DataLoader(dataset, batch_size=32, sampler=sampler, shuffle=sampler is None)
    for epoch in range(3):
        if sampler is not None:
            sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    print(f"rank {rank}: {len(state_bytes(net))} bytes of weights")
    if not distributed:
        torch.save(net.state_dict(), "debug_weights.pt")
    elif rank == 0:
        export(net, "export/weights.pt")
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
