"""The backward sits in the `else` branch of a NaN test, and the NaN branch runs a
backward of zero of its own: every rank joins DDP's all-reduce on every step."""
import math
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def fit(lm, batches, steps):
    dist.init_process_group("nccl")
    device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
    torch.cuda.set_device(device)
    model = DDP(lm.to(device), device_ids=[device.index])
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    for step, (tokens, labels) in zip(range(steps), batches):
        logits = model(tokens.to(device))
        loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), labels.to(device).flatten())
        if math.isnan(loss.item()):
            print(f"step {step}: NaN loss on rank {dist.get_rank()}, zero update")
            (logits.sum() * 0.0).backward()
        else:
            loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
