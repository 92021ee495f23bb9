"""A trainer with two distributed switches, FSDP and DDP: batches go to the local rank
when either is on, and to GPU 0 only in the `else`, where neither is, so the script runs
as one process."""

import os

import torch
import torch.distributed as dist


def move(batch, train_config, local_rank):
    for key in batch:
        if train_config.enable_fsdp or train_config.enable_ddp:
            batch[key] = batch[key].to(local_rank)
        else:
            batch[key] = batch[key].to("cuda:0")
    return batch


def train(model, loader, optimizer, train_config):
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    if train_config.enable_fsdp or train_config.enable_ddp:
        dist.init_process_group("nccl")
        torch.cuda.set_device(local_rank)
    for batch in loader:
        loss = model(**move(batch, train_config, local_rank)).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
