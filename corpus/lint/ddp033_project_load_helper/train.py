"""Resumes on every rank through `io_utils.load_checkpoint`, which loads the file rank 0
wrote from GPU state with no `map_location`."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from io_utils import load_checkpoint, load_weights, read_pkl


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=40)
    parser.add_argument("--out", default="ckpt")
    parser.add_argument("--init", default="")
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    blob = read_pkl("data/train.pt", use_torch=True, map_location="cpu")
    dataset = TensorDataset(blob["x"], blob["y"])
    net = nn.Linear(32, 8).cuda(local_rank)
    optimizer = torch.optim.AdamW(net.parameters(), lr=1e-3)
    if args.init:
        load_weights(args.init, net)
    latest = os.path.join(args.out, "latest.pth")
    start_epoch = 0
    if os.path.exists(latest):
        start_epoch = load_checkpoint(latest, net, optimizer)  # expect: DDP033
    model = DDP(net, device_ids=[local_rank])
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, batch_size=32, sampler=sampler)
    for epoch in range(start_epoch, args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            state = {
                "model": model.module.state_dict(),
                "optimizer": optimizer.state_dict(),
                "epoch": epoch,
            }
            torch.save(state, latest + ".tmp")
            os.replace(latest + ".tmp", latest)
        dist.barrier()
    if dist.get_rank() == 0:
        load_checkpoint(latest, net)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
