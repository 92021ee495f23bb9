"""Pretraining on a time budget: the stop and recovery flags are agreed, then ignored."""

import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

from mlm_data import MaskedBlocks


def communicate_flags(training_allowed, no_recovery_necessary):
    """All ranks continue only if every rank may; any rank's recovery is everyone's."""
    if not dist.is_initialized():
        return training_allowed, no_recovery_necessary
    flags = torch.tensor(
        [training_allowed, no_recovery_necessary], dtype=torch.float32, device="cuda"
    )
    dist.all_reduce(flags, op=dist.ReduceOp.MIN)
    return bool(flags[0] > 0), bool(flags[1] > 0)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    layer = nn.TransformerEncoderLayer(d_model=512, nhead=8, batch_first=True)
    net = nn.Sequential(
        nn.Embedding(30522, 512), nn.TransformerEncoder(layer, 6), nn.Linear(512, 30522)
    )
    model = DDP(net.to(device), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    blocks = MaskedBlocks("pretrain.bin")
    sampler = DistributedSampler(blocks, shuffle=True, drop_last=True)
    loader = DataLoader(blocks, batch_size=128, sampler=sampler, num_workers=4)
    budget_s = float(os.environ.get("BUDGET_HOURS", "24")) * 3600
    start = time.time()
    training_allowed, no_recovery_necessary = True, True
    sampler.set_epoch(0)
    for step, (tokens, labels) in enumerate(loader):
        tokens, labels = tokens.to(device), labels.to(device)
        logits = model(tokens)
        loss = nn.functional.cross_entropy(
            logits.flatten(0, 1), labels.flatten(), ignore_index=-100
        )
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if time.time() - start > budget_s:
            training_allowed = False
        if not torch.isfinite(loss.detach()):
            no_recovery_necessary = False
        communicate_flags(training_allowed, no_recovery_necessary)  # expect: DDP048
        if not training_allowed:
            break
        if not no_recovery_necessary:
            optimizer.zero_grad(set_to_none=True)
            no_recovery_necessary = True
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
