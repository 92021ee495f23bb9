"""Saves the best model for a single-GPU inference service."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--out", default="best_model.pt")
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(nn.Linear(20, 2).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    data = TensorDataset(torch.randn(800, 20), torch.randint(0, 2, (800,)))
    sampler = DistributedSampler(data, drop_last=True)
    loader = DataLoader(data, batch_size=40, sampler=sampler)
    best = float("inf")
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        epoch_loss = torch.zeros(1, device=f"cuda:{local_rank}")
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            epoch_loss += loss.detach()
        dist.all_reduce(epoch_loss)
        if dist.get_rank() == 0 and epoch_loss.item() < best:
            best = epoch_loss.item()
            tmp = args.out + ".tmp"
            torch.save(model.state_dict(), tmp)  # expect: DDP006
            os.replace(tmp, args.out)
        dist.barrier()
    dist.destroy_process_group()



def load_for_service(path):
    """The inference service's model: a bare Linear on one GPU."""
    model = nn.Linear(20, 2)
    model.load_state_dict(torch.load(path, map_location="cpu"))
    return model.cuda().eval()


if __name__ == "__main__":
    main()
