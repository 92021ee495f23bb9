"""Transformer fine-tuning: no weight decay on biases and norms.
DDP keeps the module's own parameters, so an optimizer built before the wrap is fine
(pytorch#59147): nothing to report."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def build_optimizer(model, lr, weight_decay=0.01):
    decay, no_decay = [], []
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        (no_decay if name.endswith("bias") or "norm" in name else decay).append(param)
    groups = [
        {"params": decay, "weight_decay": weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(groups, lr=lr)


def main(epochs=3):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(64, 4, batch_first=True), 2)
    encoder = encoder.cuda(local_rank)
    optimizer = build_optimizer(encoder, lr=5e-5)
    encoder = DDP(encoder, device_ids=[local_rank])
    data = TensorDataset(torch.randn(512, 16, 64))
    sampler = DistributedSampler(data, drop_last=True)
    loader = DataLoader(data, batch_size=8, sampler=sampler)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for (x,) in loader:
            out = encoder(x.cuda(local_rank))
            loss = out.pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
