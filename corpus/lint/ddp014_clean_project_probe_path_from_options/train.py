"""Contrastive pretraining with a linear-probe evaluation after every epoch.

`evaluate(...)` (evaluation.py) fits a linear probe on rank 0's features and writes it
to `probe.pt` under the run's log folder: the path comes from attributes of the options
object, not from the object itself. Nothing resumes from the probe, so the repeated
rewrite is shown under `--preview` only, naming the file it writes.
"""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from evaluation import evaluate


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--log_dir", default="logs/run")
    parser.add_argument("--epochs", type=int, default=20)
    options = parser.parse_args()

    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    options.master = dist.get_rank() == 0

    encoder = nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 256))
    model = DDP(encoder.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    pairs = TensorDataset(torch.rand(2048, 3, 32, 32), torch.rand(2048, 3, 32, 32))
    sampler = DistributedSampler(pairs, shuffle=True, drop_last=True)
    loader = DataLoader(pairs, batch_size=128, sampler=sampler)

    for epoch in range(options.epochs):
        sampler.set_epoch(epoch)
        for a, b in loader:
            za = F.normalize(model(a.cuda()), dim=-1)
            zb = F.normalize(model(b.cuda()), dim=-1)
            logits = za @ zb.t() / 0.1
            loss = F.cross_entropy(logits, torch.arange(len(za), device=za.device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if options.master:
            evaluate(epoch, model.module, options)  # expect-preview: DDP014
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
