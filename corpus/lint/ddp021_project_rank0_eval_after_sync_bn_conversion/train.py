"""The BatchNorm layers of the model (a class of another module) are converted to SyncBatchNorm
before the wrap, and rank 0 alone validates through the wrapper: the conversion keeps the
running statistics, so DDP's forward still broadcasts buffers on rank 0 only."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

from regressor import Regressor


def main(train_loader, val_loader, epochs):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = Regressor(64).cuda()
    model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        train_loader.sampler.set_epoch(epoch)
        model.train()
        for x, y in train_loader:
            loss = nn.functional.mse_loss(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        model.eval()
        if dist.get_rank() == 0:
            total = 0.0
            with torch.no_grad():
                for x, y in val_loader:
                    pred = model(x.cuda())  # expect: DDP021
                    total += nn.functional.mse_loss(pred, y.cuda(), reduction="sum").item()
            print(f"epoch {epoch}: validation loss {total:.4f}")
    dist.destroy_process_group()
