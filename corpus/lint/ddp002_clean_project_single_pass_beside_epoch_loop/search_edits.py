"""Score candidate rewrites of every prompt once, one shard of the prompts per GPU:
`torchrun --nproc_per_node=4 search_edits.py`. One pass, no epochs: each prompt is
searched once and its best rewrite written to this rank's own file."""
import json
import os

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

from tools.helpers import PromptSet, load_scorer


def search(scorer, prompts, steps=8):
    best = list(prompts)
    scores = scorer(best)
    for _ in range(steps):
        edited = [p.replace("  ", " ").strip() + " ." for p in best]
        new_scores = scorer(edited)
        keep = new_scores > scores
        best = [e if k else b for e, b, k in zip(edited, best, keep.tolist())]
        scores = torch.maximum(scores, new_scores)
    return best, scores


def main():
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    scorer = load_scorer("scorer.pt", device=f"cuda:{local_rank}")
    prompts = PromptSet("prompts.jsonl")
    sampler = DistributedSampler(prompts)
    loader = DataLoader(prompts, batch_size=16, sampler=sampler, collate_fn=list)
    print(f"rank {rank}: {len(loader)} batches")
    results = []
    for batch in loader:
        rewrites, scores = search(scorer, batch)
        results.extend({"prompt": p, "rewrite": r, "score": float(s)}
                       for p, r, s in zip(batch, rewrites, scores))
    with open(f"rewrites_rank{rank}.jsonl", "w") as out:
        out.writelines(json.dumps(row) + "\n" for row in results)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
