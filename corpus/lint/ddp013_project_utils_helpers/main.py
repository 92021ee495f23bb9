"""Training entry point; checkpointing goes through utils."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

import utils


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--out", default="runs/exp")
    args = parser.parse_args()
    local_rank = utils.init_distributed()
    blob = torch.load("train.pt")
    dataset = TensorDataset(blob["x"], blob["y"])
    model = DDP(nn.Linear(16, 4).cuda(local_rank), device_ids=[local_rank])
    model_without_ddp = model.module
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, batch_size=32, sampler=sampler)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        state = {"model": model_without_ddp.state_dict(), "epoch": epoch}
        utils.save_on_master(state, os.path.join(args.out, "last.pt"))
        utils.write_checkpoint(state, os.path.join(args.out, f"epoch{epoch}.pt"))  # expect: DDP013
        if utils.is_main_process():
            utils.write_checkpoint(state, os.path.join(args.out, "best.pt"))
            utils.save_and_sync(state, os.path.join(args.out, "sync.pt"))  # expect: DDP010
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
