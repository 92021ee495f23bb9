"""Checkpoints written through a helper that only rank 0 runs."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def save_checkpoint(state, path):
    tmp = f"{path}.partial"
    torch.save(state, tmp)
    os.replace(tmp, path)


def train(model, loader, sampler, optimizer, local_rank, epochs):
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            ckpt = {"epoch": epoch, "optimizer": optimizer.state_dict()}
            ckpt["model"] = model.state_dict()
            save_checkpoint(ckpt, f"ckpt_{epoch:03d}.pt")  # expect: DDP006
        dist.barrier()


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    data = TensorDataset(torch.randn(640, 6), torch.randn(640, 2))
    sampler = DistributedSampler(data, drop_last=True)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    model = DDP(nn.Linear(6, 2).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    train(model, loader, sampler, optimizer, local_rank, epochs=5)
    dist.destroy_process_group()



def load_regressor(path):
    """The regressor for offline analysis, on the CPU."""
    model = nn.Linear(6, 2)
    model.load_state_dict(torch.load(path, map_location="cpu")["model"])
    return model


if __name__ == "__main__":
    main()
