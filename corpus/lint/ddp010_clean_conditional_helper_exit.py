"""Evaluation that every rank enters only in sharded mode: the early exit turns the other
ranks away only when `sharded_eval` is off, and the helper's broadcast runs only when it is
on, where every rank is present."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def class_embeddings(model, sharded_eval):
    weights = model.module.weight.detach().clone()
    if sharded_eval:
        dist.broadcast(weights, src=0)
    return weights


def evaluate(model, args):
    sharded_eval = args.sharded_eval and dist.is_initialized()
    is_rank0 = dist.get_rank() == 0
    if not sharded_eval and not is_rank0:
        return {}
    embeddings = class_embeddings(model, sharded_eval)
    if sharded_eval:
        dist.all_reduce(embeddings)
    return {"norm": embeddings.norm().item()} if is_rank0 else {}


def main(args, epochs=2):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    data = TensorDataset(torch.randn(512, 8), torch.randint(0, 4, (512,)))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=16, sampler=sampler, num_workers=2)
    model = DDP(nn.Linear(8, 4).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.cuda(local_rank, non_blocking=True), y.cuda(local_rank, non_blocking=True)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(evaluate(model, args))
    dist.destroy_process_group()
