"""A language-model fine-tuning loop that keeps the weights of its lowest training loss:
the comparison reads this rank's own batch loss, and the save helper waits at a barrier
before rank 0 writes."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def save_best(model, path):
    dist.barrier()
    if dist.get_rank() == 0:
        tmp = path + ".tmp"
        torch.save(model.module.state_dict(), tmp)
        os.replace(tmp, path)


def finetune(model, loader, optimizer, local_rank, steps):
    model = DDP(model.to(local_rank), device_ids=[local_rank])
    best = float("inf")
    for step, batch in zip(range(steps), loader):
        input_ids = batch["input_ids"].to(local_rank)
        out = model(input_ids=input_ids, labels=input_ids)
        loss = out.loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if loss.item() < best:
            best = loss.item()
            save_best(model, "best.pt")  # expect: DDP010
