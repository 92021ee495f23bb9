"""Resumable training that rewrites `last.ckpt` after every epoch and, every fifth epoch,
writes the same dictionary to a file named for the epoch. A crash while `last.ckpt` is
written leaves the newest numbered file complete: the run loses at most a few epochs, so
the in-place save is only shown under --preview."""
import argparse
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def parse():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="checkpoints")
    parser.add_argument("--epochs", type=int, default=60)
    parser.add_argument("--keep-every", type=int, default=5)
    return parser.parse_args()


def main():
    args = parse()
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dataset = TensorDataset(torch.randn(4096, 64), torch.randint(0, 8, (4096,)))
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=64, sampler=sampler)
    model = DDP(nn.Sequential(nn.Linear(64, 64), nn.GELU(), nn.Linear(64, 8)).cuda())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    last = os.path.join(args.out, "last.ckpt")
    first_epoch = 0
    if os.path.isfile(last):
        saved = torch.load(last, map_location=f"cuda:{local_rank}")
        model.module.load_state_dict(saved["weights"])
        optimizer.load_state_dict(saved["optimizer"])
        first_epoch = saved["epoch"] + 1
    for epoch in range(first_epoch, args.epochs):
        sampler.set_epoch(epoch)
        for inputs, labels in loader:
            loss = nn.functional.cross_entropy(model(inputs.cuda()), labels.cuda())
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            snapshot = {
                "weights": model.module.state_dict(),
                "optimizer": optimizer.state_dict(),
                "epoch": epoch,
            }
            torch.save(snapshot, last)  # expect-preview: DDP014
            if (epoch + 1) % args.keep_every == 0:
                torch.save(snapshot, os.path.join(args.out, f"epoch{epoch:04d}.ckpt"))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
