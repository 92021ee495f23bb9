"""Contrastive fine-tuning of a text encoder with gradient accumulation.

With `--adapter` the encoder is frozen and only a small adapter is wrapped in DDP; by
default the encoder itself is wrapped, but the training forward calls the bare module
(`encoder.module`), so its backward carries no all-reduce to skip with no_sync()
(DDP026 reports that bypass). The one DDP forward in the loop runs on the adapter path
only: on the default path there is nothing to defer.
"""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Adapter(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.proj = nn.Sequential(nn.Linear(width, width), nn.GELU(), nn.Linear(width, 128))

    def forward(self, hidden):
        return self.proj(hidden.mean(dim=1))


def contrastive(a, b, temperature):
    logits = F.normalize(a, dim=-1) @ F.normalize(b, dim=-1).t() / temperature
    return F.cross_entropy(logits, torch.arange(len(a), device=a.device))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--adapter", action="store_true")
    parser.add_argument("--accum", type=int, default=4)
    parser.add_argument("--temperature", type=float, default=0.05)
    args = parser.parse_args()

    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)

    encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(256, 4, batch_first=True), 2)
    encoder = encoder.to(device)
    adapter = Adapter(256).to(device)
    if args.adapter:
        encoder.requires_grad_(False)
        adapter = DDP(adapter, device_ids=[local_rank])
        params = adapter.parameters()
    else:
        encoder = DDP(encoder, device_ids=[local_rank])
        params = encoder.parameters()
    optimizer = torch.optim.AdamW(params, lr=2e-5)

    pairs = TensorDataset(torch.randn(2048, 16, 256), torch.randn(2048, 16, 256))
    sampler = DistributedSampler(pairs, shuffle=True, drop_last=True)
    loader = DataLoader(pairs, batch_size=32, sampler=sampler)

    for epoch in range(3):
        sampler.set_epoch(epoch)
        for step, (left, right) in enumerate(loader):
            both = torch.cat([left, right]).to(device)
            bare = encoder.module if not args.adapter else encoder
            if args.adapter:
                with torch.no_grad():
                    hidden = bare(both)
                embeddings = adapter(hidden)
            else:
                embeddings = bare(both).mean(dim=1)  # expect: DDP026
            a, b = embeddings.chunk(2)
            loss = contrastive(a, b, args.temperature) / args.accum
            loss.backward()
            if (step + 1) % args.accum == 0:
                optimizer.step()
                optimizer.zero_grad()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
