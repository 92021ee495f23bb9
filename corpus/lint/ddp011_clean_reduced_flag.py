"""NaN guard decided collectively: every rank learns whether any rank saw a bad loss."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def any_rank_bad(loss):
    bad = torch.tensor([0.0 if torch.isfinite(loss) else 1.0], device=loss.device)
    dist.all_reduce(bad, op=dist.ReduceOp.MAX)
    return bad.item() > 0


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    blob = torch.load("train.pt")
    train_set = TensorDataset(blob["x"], blob["y"])
    model = DDP(nn.Linear(32, 8).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    sampler = DistributedSampler(train_set, drop_last=True)
    loader = DataLoader(train_set, batch_size=64, sampler=sampler)
    for epoch in range(10):
        sampler.set_epoch(epoch)
        for step, (x, y) in enumerate(loader):
            x, y = x.cuda(local_rank), y.cuda(local_rank)
            loss = nn.functional.cross_entropy(model(x), y)
            if step % 2 == 0:
                # cheap inline check
                nonfinite = (~torch.isfinite(loss.detach())).float()
                dist.all_reduce(nonfinite)
                if nonfinite.item() > 0:
                    optimizer.zero_grad(set_to_none=True)
                    continue
            elif any_rank_bad(loss.detach()):
                optimizer.zero_grad(set_to_none=True)
                continue
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
