"""Counts objects; `--pre` restarts from a checkpoint that `misc.save_checkpoint` wrote
from the dict built below, with the model's GPU state, so the loaded file holds CUDA
tensors of rank 0's device."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from misc import save_checkpoint


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pre", default=None)
    parser.add_argument("--save_path", default="save_file")
    parser.add_argument("--epochs", type=int, default=1500)
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(nn.Linear(256, 1).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    start_epoch, best = 0, float("inf")
    if args.pre and os.path.isfile(args.pre):
        checkpoint = torch.load(args.pre)  # expect: DDP033
        model.load_state_dict(checkpoint["state_dict"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        start_epoch = checkpoint["epoch"]
        best = checkpoint["best_mae"]
    dataset = TensorDataset(torch.randn(1024, 256), torch.rand(1024, 1))
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=16, sampler=sampler)
    for epoch in range(start_epoch, args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.l1_loss(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        mae = loss.item()
        if dist.get_rank() == 0:
            save_checkpoint(  # expect: DDP014
                {
                    "epoch": epoch + 1,
                    "state_dict": model.state_dict(),
                    "optimizer": optimizer.state_dict(),
                    "best_mae": min(mae, best),
                },
                mae < best,
                args.save_path,
            )
        best = min(mae, best)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
