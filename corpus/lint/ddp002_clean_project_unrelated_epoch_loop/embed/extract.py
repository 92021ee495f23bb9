"""Embed a corpus once with a frozen encoder, one shard per GPU:
`torchrun --nproc_per_node=8 embed/extract.py --out feats`."""
import argparse
import os

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="feats")
    args = parser.parse_args()
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    encoder = torch.jit.load("encoder.pt", map_location=f"cuda:{local_rank}").eval()
    corpus = TensorDataset(torch.load("tokens.pt", map_location="cpu"))
    sampler = DistributedSampler(corpus)
    loader = DataLoader(corpus, batch_size=512, sampler=sampler)
    chunks = []
    with torch.no_grad():
        for (tokens,) in loader:
            chunks.append(encoder(tokens.cuda()).cpu())
    os.makedirs(args.out, exist_ok=True)
    torch.save(torch.cat(chunks), os.path.join(args.out, f"part{rank:02d}.pt"))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
