"""A sequence-tagging fine-tune that evaluates at the end of each epoch on the main
process, which under the launcher is rank 0 (`local_rank in [-1, 0]`): there the dev
loader is rank 0's DistributedSampler shard, so the loss that picks the best checkpoint
is measured on 1/N of the dev set."""

import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, DistributedSampler, RandomSampler, TensorDataset


def dev_loss(args, tagger, dev_set):
    if args.local_rank == -1:
        sampler = RandomSampler(dev_set)
    else:
        sampler = DistributedSampler(dev_set, shuffle=False)
    batches = DataLoader(dev_set, batch_size=128, sampler=sampler)
    tagger.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for tokens, tags in batches:
            scores = tagger(tokens.to(args.device))
            total += nn.functional.cross_entropy(scores, tags.to(args.device)).item()
            count += 1
    tagger.train()
    return {"dev_loss": total / count}


def fit(args, tagger, train_set, dev_set):
    sampler = DistributedSampler(train_set) if args.local_rank != -1 else RandomSampler(train_set)
    batches = DataLoader(train_set, batch_size=16, sampler=sampler)
    optimizer = torch.optim.Adam(tagger.parameters(), lr=5e-5)
    lowest = float("inf")
    for epoch in range(args.num_train_epochs):
        if args.local_rank != -1:
            sampler.set_epoch(epoch)
        for tokens, tags in batches:
            loss = nn.functional.cross_entropy(tagger(tokens.to(args.device)), tags.to(args.device))
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        if args.local_rank in [-1, 0]:
            metrics = dev_loss(args, tagger, dev_set)
            print(f"epoch {epoch}: dev loss {metrics['dev_loss']:.4f}")  # expect: DDP038
            if metrics["dev_loss"] < lowest:  # expect: DDP038
                lowest = metrics["dev_loss"]
                bare = tagger.module if hasattr(tagger, "module") else tagger
                path = os.path.join(args.output_dir, f"tagger-epoch{epoch}.bin")
                torch.save(bare.state_dict(), path)  # expect-preview: DDP059


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", -1)))
    parser.add_argument("--num_train_epochs", type=int, default=5)
    parser.add_argument("--output_dir", default="tagger_out")
    args = parser.parse_args()
    if args.local_rank != -1:
        torch.cuda.set_device(args.local_rank)
        dist.init_process_group("nccl")
        args.device = torch.device("cuda", args.local_rank)
    else:
        args.device = torch.device("cuda")
    data = torch.load("ner_features.pt")
    tagger = nn.Linear(1024, 17).to(args.device)
    if args.local_rank != -1:
        tagger = nn.parallel.DistributedDataParallel(tagger, device_ids=[args.local_rank])
    fit(args, tagger, TensorDataset(*data["train"]), TensorDataset(*data["dev"]))


if __name__ == "__main__":
    main()
