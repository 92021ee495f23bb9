"""Accumulation with no_sync; the clip was pasted into both branches."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--accum", type=int, default=8)
    parser.add_argument("--max-norm", type=float, default=1.0)
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(nn.Linear(128, 128).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    data = TensorDataset(torch.randn(4096, 128), torch.randn(4096, 128))
    sampler = DistributedSampler(data, drop_last=True)
    loader = DataLoader(data, batch_size=8, sampler=sampler)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for i, (x, y) in enumerate(loader):
            loss = nn.functional.mse_loss(model(x.cuda(local_rank)), y.cuda(local_rank))
            loss = loss / args.accum
            if (i + 1) % args.accum != 0:
                with model.no_sync():
                    loss.backward()
                    nn.utils.clip_grad_norm_(model.parameters(), args.max_norm)  # expect: DDP007
            else:
                loss.backward()
                nn.utils.clip_grad_norm_(model.parameters(), args.max_norm)
                optimizer.step()
                optimizer.zero_grad()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
