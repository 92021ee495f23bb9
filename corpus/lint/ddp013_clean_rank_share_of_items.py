"""Offline embedding extraction split across the ranks of one job: each rank takes its own
share of the shards (a range offset by its rank) and of the model snapshots (a slice
computed from its rank), and names each output file after the item it processed. No two
ranks write the same file, so no rank guard is needed."""

import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn


def embed_shard(encoder, shard_id):
    tokens = torch.load(f"shards/{shard_id:05d}.pt")
    with torch.no_grad():
        return encoder(tokens.cuda()).cpu()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--first-shard", type=int, default=0)
    parser.add_argument("--shards-per-rank", type=int, default=64)
    parser.add_argument("--snapshots", nargs="+", default=[])
    parser.add_argument("--out", default="embeddings")
    args = parser.parse_args()

    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    encoder = nn.Linear(512, 128).cuda()

    start = args.first_shard + rank * args.shards_per_rank
    for shard_id in range(start, start + args.shards_per_rank):
        embeddings = embed_shard(encoder, shard_id)
        torch.save({"embeddings": embeddings}, os.path.join(args.out, f"{shard_id}.pt"))

    per_rank = len(args.snapshots) // world
    mine = args.snapshots[rank * per_rank : (rank + 1) * per_rank]
    for snapshot in mine:
        encoder.load_state_dict(torch.load(snapshot, map_location="cpu"))
        scores = embed_shard(encoder, 0).norm(dim=1)
        name = os.path.splitext(os.path.basename(snapshot))[0]
        torch.save({"scores": scores}, os.path.join(args.out, f"scores_{name}.pt"))
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
