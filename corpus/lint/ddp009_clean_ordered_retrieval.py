"""Video-text pretraining; after every epoch each rank scores the whole retrieval benchmark.

The benchmark loader reads its samples in order (a SequentialSampler under distribution,
no sampler otherwise) and only feeds `similarity_matrix`, which runs under `model.eval()`
and `no_grad`: every rank scoring the same set is duplicated evaluation work, not
duplicated training epochs.
"""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, SequentialSampler, TensorDataset


class DualEncoder(torch.nn.Module):
    def __init__(self, dim=256):
        super().__init__()
        self.video = torch.nn.Linear(1024, dim)
        self.text = torch.nn.Linear(768, dim)

    def forward(self, clips, captions):
        return F.normalize(self.video(clips), dim=-1), F.normalize(self.text(captions), dim=-1)


def similarity_matrix(model, loader, device):
    model.eval()
    videos, texts = [], []
    with torch.no_grad():
        for clips, captions in loader:
            v, t = model(clips.to(device), captions.to(device))
            videos.append(v)
            texts.append(t)
    model.train()
    return torch.cat(videos) @ torch.cat(texts).T


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=5)
    args = parser.parse_args()
    distributed = "WORLD_SIZE" in os.environ
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)
    if distributed:
        dist.init_process_group("nccl")

    pairs = TensorDataset(*torch.load("pairs.pt"))
    benchmark = TensorDataset(*torch.load("retrieval_benchmark.pt"))
    if distributed:
        pair_sampler = DistributedSampler(pairs, shuffle=True, drop_last=True)
        bench_sampler = SequentialSampler(benchmark)
    else:
        pair_sampler = None
        bench_sampler = None
    pair_loader = DataLoader(
        pairs, batch_size=128, shuffle=pair_sampler is None, sampler=pair_sampler, drop_last=True
    )
    bench_loader = DataLoader(
        benchmark, batch_size=256, shuffle=bench_sampler is None, sampler=bench_sampler
    )

    model = DDP(DualEncoder().to(device), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for epoch in range(args.epochs):
        if distributed:
            pair_sampler.set_epoch(epoch)
        for clips, captions in pair_loader:
            v, t = model(clips.to(device), captions.to(device))
            logits = v @ t.T / 0.07
            target = torch.arange(len(logits), device=device)
            loss = (F.cross_entropy(logits, target) + F.cross_entropy(logits.T, target)) / 2
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        scores = similarity_matrix(model, bench_loader, device)
        recall = (scores.argmax(1) == torch.arange(len(scores), device=device)).float().mean()
        print(f"epoch {epoch}: recall@1 {recall.item():.3f}")
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
