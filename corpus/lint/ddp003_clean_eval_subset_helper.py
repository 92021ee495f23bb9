"""Few-shot evaluation helpers: a random subset of the test split, sharded across ranks.

`prepare_eval_batches` builds a DistributedSampler with the default shuffle=True on a
subset of the test set. It serves evaluation only (nothing here trains), so its padding
and shuffling do not change what any model learns.
"""
import random

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, Subset


def pad_collate(items):
    width = max(len(tokens) for tokens, _ in items)
    batch = torch.zeros(len(items), width, dtype=torch.long)
    for row, (tokens, _) in enumerate(items):
        batch[row, : len(tokens)] = torch.as_tensor(tokens)
    return batch, [answer for _, answer in items]


def prepare_eval_batches(test_dataset, num_samples, batch_size, seed=0):
    picked = random.Random(seed).sample(range(len(test_dataset)), num_samples)
    dataset = Subset(test_dataset, picked)
    sampler = DistributedSampler(dataset)
    return DataLoader(dataset, batch_size=batch_size, sampler=sampler, collate_fn=pad_collate)


def exact_match(predictions, answers):
    hits = torch.tensor([float(p.strip() == a.strip()) for p, a in zip(predictions, answers)])
    totals = torch.stack([hits.sum(), torch.tensor(float(len(hits)))])
    dist.all_reduce(totals)
    return (totals[0] / totals[1]).item()
