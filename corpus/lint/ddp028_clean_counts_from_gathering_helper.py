"""Dense retriever with in-batch negatives: the loss helper gathers every rank's
embeddings, so the correct count it returns is over the global batch."""

import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def contrastive_step(model, batch, rank, world_size):
    queries, passages = model(batch["query"].cuda(), batch["passage"].cuda())
    q_parts = [torch.zeros_like(queries) for _ in range(world_size)]
    p_parts = [torch.zeros_like(passages) for _ in range(world_size)]
    dist.all_gather(q_parts, queries.contiguous())
    dist.all_gather(p_parts, passages.contiguous())
    q_parts[rank], p_parts[rank] = queries, passages
    scores = torch.cat(q_parts) @ torch.cat(p_parts).T
    labels = torch.arange(len(scores), device=scores.device)
    loss = F.cross_entropy(scores, labels)
    correct = (scores.argmax(dim=1) == labels).sum()
    return loss, correct


def train(encoder, train_set, epochs):
    dist.init_process_group("nccl")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(encoder.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    sampler = DistributedSampler(train_set)
    loader = DataLoader(train_set, batch_size=32, sampler=sampler, drop_last=True)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        correct_sum = 0
        for batch in loader:
            loss, correct = contrastive_step(model, batch, rank, world_size)
            correct_sum += correct.item()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if rank == 0:
            print(f"epoch {epoch}: in-batch accuracy {correct_sum / len(train_set):.3f}")
