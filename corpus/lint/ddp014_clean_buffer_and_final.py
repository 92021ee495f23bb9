"""Weights shipped between ranks through an in-memory buffer; one final export at the end."""
import io
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def share_from_rank0(module, rank):
    payload = [None]
    if rank == 0:
        buffer = io.BytesIO()
        torch.save(module.state_dict(), buffer)
        payload[0] = buffer.getvalue()
    dist.broadcast_object_list(payload, src=0)
    return torch.load(io.BytesIO(payload[0]))


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    blob = torch.load("train.pt")
    dataset = TensorDataset(blob["x"], blob["y"])
    model = DDP(nn.Linear(16, 4).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters())
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, batch_size=32, sampler=sampler)
    ema = nn.Linear(16, 4).cuda(local_rank)
    for epoch in range(8):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        ema.load_state_dict(share_from_rank0(model.module, rank))
    if rank == 0:
        torch.save(ema.state_dict(), "exports/ema_final.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
