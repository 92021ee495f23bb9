"""Twin of the split extraction: here every rank loops over all the shards and all the
model snapshots, so each output file is written by every rank at once."""

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
    parser.add_argument("--num-shards", type=int, default=512)
    parser.add_argument("--snapshots", nargs="+", default=[])
    parser.add_argument("--out", default="embeddings")
    args = parser.parse_args()

    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    encoder = nn.Linear(512, 128).cuda()

    start = args.first_shard
    for shard_id in range(start, start + args.num_shards):
        embeddings = embed_shard(encoder, shard_id)
        torch.save({"embeddings": embeddings}, os.path.join(args.out, f"{shard_id}.pt"))  # expect: DDP013

    for snapshot in args.snapshots:
        encoder.load_state_dict(torch.load(snapshot, map_location="cpu"))
        scores = embed_shard(encoder, 0).norm(dim=1)
        name = os.path.splitext(os.path.basename(snapshot))[0]
        torch.save({"scores": scores}, os.path.join(args.out, f"scores_{name}.pt"))  # expect: DDP013
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
