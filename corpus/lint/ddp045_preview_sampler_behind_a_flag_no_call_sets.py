"""Linear-probe evaluation on saved features: the loader helper can shard its data with a
DistributedSampler, but only when `distributed=True`, which its one call never passes. The
script trains one process's copy on all the data; whether some run shards it is unknown."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def feature_loader(path, batch_size=256, distributed=False):
    saved = torch.load(path)
    dataset = TensorDataset(saved["features"], saved["targets"].long())
    sampler = DistributedSampler(dataset, num_replicas=dist.get_world_size(), rank=dist.get_rank()) if distributed else None
    return DataLoader(dataset, batch_size=batch_size, sampler=sampler, shuffle=not distributed, drop_last=True)


def main(args):
    loader = feature_loader(args.features, batch_size=args.batch_size)
    probe = nn.Linear(args.dim, 1000).cuda()
    optimizer = torch.optim.SGD(probe.parameters(), lr=0.1, momentum=0.9)
    for epoch in range(args.epochs):  # expect-preview: DDP002
        for features, targets in loader:
            loss = nn.functional.cross_entropy(probe(features.cuda()), targets.cuda())
            optimizer.zero_grad()
            loss.backward()  # expect-preview: DDP045
            optimizer.step()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--features", default="train_feats.pt")
    parser.add_argument("--dim", type=int, default=768)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--epochs", type=int, default=90)
    main(parser.parse_args())
