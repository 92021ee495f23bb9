"""Old-style OOM handling by message, with an adaptive micro-batch fallback."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def forward_backward(model, x, y, chunks):
    for xs, ys in zip(x.chunk(chunks), y.chunk(chunks)):
        loss = nn.functional.mse_loss(model(xs), ys) / chunks
        loss.backward()


def train_epoch(model, loader, optimizer, device, state):
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        try:
            forward_backward(model, x, y, state["chunks"])
        except RuntimeError as e:  # expect: DDP012
            if "out of memory" in str(e):
                state["chunks"] *= 2
                optimizer.zero_grad(set_to_none=True)
                torch.cuda.empty_cache()
                continue
            raise
        optimizer.step()


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    dist.init_process_group("nccl")
    data = torch.load("volumes.pt")
    dataset = TensorDataset(data["x"], data["y"])
    net = nn.Sequential(nn.Conv3d(1, 16, 3, padding=1), nn.ReLU(), nn.Conv3d(16, 1, 1))
    model = DistributedDataParallel(net.to(device), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, batch_size=4, sampler=sampler)
    state = {"chunks": 1}
    for epoch in range(100):
        sampler.set_epoch(epoch)
        train_epoch(model, loader, optimizer, device, state)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
