"""Text-retrieval evaluation: each rank embeds its share of the queries, the embeddings
are gathered with all_gather_object and recall@10 is computed over everything gathered.
The query sampler pads the last ranks with queries from the start, which then count twice
in the recall."""
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.utils.data import DataLoader, DistributedSampler


@torch.no_grad()
def embed_queries(encoder, loader, device):
    rows = []
    for token_ids, positive_ids in loader:
        vectors = F.normalize(encoder(token_ids.to(device)), dim=-1)
        rows.extend(zip(vectors.cpu(), positive_ids.tolist()))
    shards = [None] * dist.get_world_size()
    dist.all_gather_object(shards, rows)
    return [row for shard in shards for row in shard]


def recall_at_10(rows, passage_matrix):
    hits = 0
    for vector, positive in rows:
        top = (passage_matrix @ vector).topk(10).indices.tolist()
        hits += int(positive in top)
    return hits / len(rows)


def evaluate(encoder, query_set, passage_matrix):
    device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
    query_sampler = DistributedSampler(query_set, shuffle=False)  # expect: DDP003
    query_loader = DataLoader(query_set, batch_size=512, sampler=query_sampler, num_workers=2)
    rows = embed_queries(encoder, query_loader, device)
    return recall_at_10(rows, passage_matrix)
