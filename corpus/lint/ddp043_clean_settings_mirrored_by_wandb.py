"""Rank 0 starts the experiment logger with the run's settings and reads them back from it
(`hyperparams = run.config`): the logger's copy holds the same values, so every rank runs
the same number of epochs."""

import json
import os

import torch
import torch.distributed as dist
import wandb
from torch.nn.parallel import DistributedDataParallel as DDP


def main(config_path, model, loader):
    dist.init_process_group("nccl")
    rank, local_rank = dist.get_rank(), int(os.environ["LOCAL_RANK"])
    with open(config_path) as handle:
        hyperparams = json.load(handle)
    if rank == 0:
        run = wandb.init(project="trajectories", config=hyperparams)
        hyperparams = run.config
    model = DDP(model.cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=hyperparams["learning_rate"])
    for epoch in range(1, hyperparams["train_epochs"] + 1):
        for batch, target in loader:
            loss = torch.nn.functional.mse_loss(model(batch.cuda()), target.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
