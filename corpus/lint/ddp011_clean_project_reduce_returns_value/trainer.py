"""Speech-recognition trainer: the loss is averaged over the ranks before the finite
check, so every rank takes the same branch."""

import math

import torch
from torch.nn.parallel import DistributedDataParallel as DDP

import comm


class Trainer:
    def __init__(self, model, optimizer, local_rank):
        self.model = DDP(model.cuda(local_rank), device_ids=[local_rank])
        self.optimizer = optimizer

    def train_step(self, feats, targets):
        loss = self.model(feats.cuda(), targets.cuda())
        loss_value = comm.all_reduce(loss.detach().clone()).item()
        if not math.isfinite(loss_value):
            print(f"invalid loss {loss_value}, skipping the step")
            return False
        self.optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 5.0)
        self.optimizer.step()
        return True
