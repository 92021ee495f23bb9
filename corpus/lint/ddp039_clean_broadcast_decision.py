"""Rank 0 decides on its own shard's loss and broadcasts the decision: every rank leaves
the loop together; a `break` out of an evaluation loop is no early stop."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main(epochs=100, eval_batches=20):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    train_set = TensorDataset(torch.randn(4000, 5), torch.randn(4000, 1))
    val_set = TensorDataset(torch.randn(1000, 5), torch.randn(1000, 1))
    sampler = DistributedSampler(train_set, drop_last=True)
    loader = DataLoader(train_set, batch_size=40, sampler=sampler)
    val_loader = DataLoader(val_set, batch_size=40, sampler=DistributedSampler(val_set, shuffle=False, drop_last=True))
    model = DDP(nn.Linear(5, 1).to(device), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        model.eval()
        shard_loss = 0.0
        with torch.no_grad():
            for i, (x, y) in enumerate(val_loader):
                if i >= eval_batches:
                    break
                shard_loss += nn.functional.mse_loss(model(x.to(device)), y.to(device)).item()
        model.train()
        stop = torch.tensor([1.0 if shard_loss < 1e-3 else 0.0], device=device)
        dist.broadcast(stop, src=0)
        if stop.item() > 0:
            break
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
