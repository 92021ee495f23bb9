"""Composed image retrieval: rank 0 evaluates and stops early; every rank meets at a
barrier at the end of each epoch."""

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def recall_at_k(model, loader, k=10):
    hits = total = 0
    with torch.no_grad():
        for query, target in loader:
            scores = model.embed(query.cuda()) @ model.embed(target.cuda()).T
            top = scores.topk(k, dim=1).indices
            hits += (top == torch.arange(len(query), device=top.device)[:, None]).any(1).sum()
            total += len(query)
    return float(hits) / total


def train(net, train_loader, val_loader, epochs, patience):
    local_rank = int(os.environ["LOCAL_RANK"])
    model = DDP(net.cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
    best, waited = 0.0, 0
    for epoch in range(epochs):
        train_loader.sampler.set_epoch(epoch)
        for query, target in train_loader:
            logits = model(query.cuda()) @ model(target.cuda()).T
            labels = torch.arange(len(query), device=logits.device)
            loss = torch.nn.functional.cross_entropy(logits, labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            score = recall_at_k(net, val_loader)
            if score > best:
                best, waited = score, 0
                torch.save(net.state_dict(), "best.pt")  # expect-preview: DDP014
            else:
                waited += 1
                if waited > patience:
                    break  # expect: DDP047
        dist.barrier()
