"""Composed image retrieval: the query and target encoders are methods of the model,
called on the name kept for saving, not through the DDP wrapper."""

import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

from retrieval import CompositionModel


def train(loader, epochs):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(CompositionModel().cuda(), device_ids=[local_rank])
    model_without_ddp = model.module
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    for epoch in range(epochs):
        loader.sampler.set_epoch(epoch)
        for reference, caption, target in loader:
            query = model_without_ddp.encode_query(reference.cuda(), caption)  # expect: DDP026
            candidates = model_without_ddp.encode_target(target.cuda())  # expect: DDP026
            logits = 100 * query @ candidates.T
            loss = F.cross_entropy(logits, torch.arange(len(logits), device=logits.device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            torch.save(model_without_ddp.state_dict(), f"cir_epoch{epoch}.pt")
