"""Crop-type classification from satellite time series: `torchrun --nproc_per_node=4
train.py --resume`. The run resumes from `checkpoint.pt`; `best.pt` is read back only
once the epochs are over, to report the best score. The steps run in the lab's
training package."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from seqtrain import train_one_epoch  # the lab's training package, installed with pip


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="runs/crops")
    parser.add_argument("--epochs", type=int, default=50)
    parser.add_argument("--resume", action="store_true")
    args = parser.parse_args()
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = nn.GRU(13, 64, batch_first=True).cuda()
    head = nn.Linear(64, 20).cuda()
    params = list(model.parameters()) + list(head.parameters())
    optimizer = torch.optim.AdamW(params, lr=1e-3)
    start, best = 0, 0.0
    last = os.path.join(args.out, "checkpoint.pt")
    if args.resume and os.path.isfile(last):
        state = torch.load(last, map_location="cpu")
        model.load_state_dict(state["model"])
        head.load_state_dict(state["head"])
        optimizer.load_state_dict(state["optimizer"])
        start, best = state["epoch"] + 1, state["best"]
    model = DDP(model, device_ids=[local_rank])
    head = DDP(head, device_ids=[local_rank])
    data = TensorDataset(torch.randn(4096, 24, 13), torch.randint(0, 20, (4096,)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=64, sampler=sampler, drop_last=True)
    for epoch in range(start, args.epochs):
        sampler.set_epoch(epoch)
        accuracy = train_one_epoch(model, head, loader, optimizer)
        if dist.get_rank() == 0:
            os.makedirs(args.out, exist_ok=True)
            state = {"model": model.module.state_dict(), "head": head.module.state_dict(),
                     "optimizer": optimizer.state_dict(), "epoch": epoch, "best": best}
            torch.save(state, last)  # expect: DDP014
            if accuracy > best:
                best = accuracy
                record = {"model": model.module.state_dict(), "epoch": epoch, "accuracy": best}
                torch.save(record, os.path.join(args.out, "best.pt"))  # expect-preview: DDP014
    if dist.get_rank() == 0:
        final = torch.load(os.path.join(args.out, "best.pt"), map_location="cpu")
        print(f"best epoch {final['epoch']}: accuracy {final['accuracy']:.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
