"""Training goes through the DDP wrapper; the unwrapped name serves evaluation only."""

import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

from retrieval import CompositionModel


def recall_at_10(model_without_ddp, loader):
    hits = total = 0
    with torch.no_grad():
        for reference, caption, target in loader:
            query = model_without_ddp.encode_query(reference.cuda(), caption)
            candidates = model_without_ddp.encode_target(target.cuda())
            top = (query @ candidates.T).topk(10, dim=1).indices
            hits += (top == torch.arange(len(top), device=top.device)[:, None]).any(1).sum()
            total += len(top)
    return float(hits) / total


def train(loader, val_loader, epochs):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(CompositionModel().cuda(), device_ids=[local_rank])
    model_without_ddp = model.module
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    for epoch in range(epochs):
        loader.sampler.set_epoch(epoch)
        for reference, caption, target in loader:
            query, candidates = model(reference.cuda(), caption, target.cuda())
            logits = 100 * query @ candidates.T
            loss = F.cross_entropy(logits, torch.arange(len(logits), device=logits.device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            print(f"epoch {epoch}: R@10 {recall_at_10(model_without_ddp, val_loader):.3f}")
