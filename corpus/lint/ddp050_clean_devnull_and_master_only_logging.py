"""A torchrun trainer that silences the other ranks by pointing their stdout at
`os.devnull`, and sets up its log file from a helper called on the master rank only
(`args.local_rank in [-1, 0]`)."""

import argparse
import logging
import os
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def setup_logging(out_dir):
    handler = logging.FileHandler(os.path.join(out_dir, "train.log"), mode="w")
    logging.getLogger().addHandler(handler)
    logging.getLogger().setLevel(logging.INFO)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="outputs")
    args = parser.parse_args()
    args.local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(args.local_rank)
    dist.init_process_group("nccl")
    if args.local_rank in [-1, 0]:
        setup_logging(args.out)
    else:
        sys.stdout = open(os.devnull, "w")
    model = DDP(torch.nn.Linear(32, 4).cuda(args.local_rank), device_ids=[args.local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    train_set = TensorDataset(torch.randn(512, 32), torch.randint(0, 4, (512,)))
    sampler = DistributedSampler(train_set, shuffle=True, drop_last=True)
    loader = DataLoader(train_set, batch_size=32, sampler=sampler, num_workers=2)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.cuda(args.local_rank, non_blocking=True), y.cuda(args.local_rank, non_blocking=True)
            loss = torch.nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch} loss {loss.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
