"""Building a dense retrieval index: every rank embeds its shard of the documents in order,
the embeddings and the document ids are gathered together, each id is kept once, and the
script asserts that the index holds exactly one entry per document, so the sampler's
padded repeats never reach the index file."""
import os
import pickle

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


def embed_corpus(encoder, documents, out_path, batch_size=512):
    world_size = dist.get_world_size()
    sampler = DistributedSampler(documents, shuffle=False)
    loader = DataLoader(documents, batch_size=batch_size, sampler=sampler, num_workers=4)
    kept = {}
    with torch.no_grad():
        for batch in loader:
            tokens, doc_ids = [part.cuda(non_blocking=True) for part in batch]
            vectors = encoder(tokens)
            all_vectors = [torch.zeros_like(vectors) for _ in range(world_size)]
            all_ids = [torch.zeros_like(doc_ids) for _ in range(world_size)]
            dist.all_gather(all_vectors, vectors.contiguous())
            dist.all_gather(all_ids, doc_ids.contiguous())
            for doc_id, vector in zip(torch.cat(all_ids).tolist(), torch.cat(all_vectors)):
                if doc_id not in kept:
                    kept[doc_id] = vector.cpu()
    assert len(kept) == len(documents)
    if dist.get_rank() == 0:
        with open(out_path, "wb") as handle:
            pickle.dump(sorted(kept.items()), handle)
    dist.barrier()


def main(encoder, documents):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    encoder = encoder.cuda().eval()
    embed_corpus(encoder, documents, "index.pkl")
    dist.destroy_process_group()
