"""Multi-task loss computed in a helper that divides by args.world_size."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def compute_loss(outputs, cls_target, reg_target, args):
    cls_loss = nn.functional.cross_entropy(outputs[:, :5], cls_target)
    reg_loss = nn.functional.l1_loss(outputs[:, 5:], reg_target)
    total = cls_loss + args.reg_weight * reg_loss
    return total / args.world_size  # expect: DDP005


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--reg-weight", type=float, default=0.5)
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    args.world_size = dist.get_world_size()
    data = TensorDataset(torch.randn(1500, 12), torch.randint(0, 5, (1500,)), torch.randn(1500, 4))
    sampler = DistributedSampler(data, drop_last=True)
    loader = DataLoader(data, batch_size=30, sampler=sampler)
    model = DDP(nn.Linear(12, 9).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-4)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for x, cls_t, reg_t in loader:
            out = model(x.cuda(local_rank))
            loss = compute_loss(out, cls_t.cuda(local_rank), reg_t.cuda(local_rank), args)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
