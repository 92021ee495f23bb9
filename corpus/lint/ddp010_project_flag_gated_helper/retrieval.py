"""Retrieval evaluation helpers. `embed_queries` broadcasts only in sharded mode, a flag every
rank holds alike; `sync_counts` always all-reduces."""
import torch
import torch.distributed as dist


def embed_queries(model, queries, sharded):
    with torch.no_grad():
        vectors = model(queries)
    if sharded:
        dist.broadcast(vectors, src=0)
    return vectors


def sync_counts(hits):
    counts = torch.tensor([hits], dtype=torch.long)
    dist.all_reduce(counts)
    return int(counts.item())
