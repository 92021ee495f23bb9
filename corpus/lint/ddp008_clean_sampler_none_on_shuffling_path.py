"""Pretraining loader: the sampler shards and shuffles with several GPUs; with one, the
loader shuffles itself and gets no sampler."""

import torch
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from corpus_data import MaskedLMDataset, collate_masked


def build_pretrain_loader(vocab, args, epoch=0, shuffle=True):
    dataset = MaskedLMDataset(vocab, args.input.format(epoch % args.shards))
    if torch.cuda.device_count() > 1 and shuffle:
        sampler = DistributedSampler(dataset)
        loader = DataLoader(dataset, batch_size=args.batch, sampler=sampler, collate_fn=collate_masked)
    else:
        sampler = None
        loader = DataLoader(
            dataset, batch_size=args.batch, sampler=sampler, shuffle=shuffle, collate_fn=collate_masked
        )
    return loader


def pretrain_loaders(vocab, args, epochs):
    return [build_pretrain_loader(vocab, args, epoch=e, shuffle=True) for e in range(epochs)]
