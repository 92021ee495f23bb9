"""Emotion-recognition fine-tuning that places each batch on the device the inner model
reports (`inner_model.device()`, a method of the model class), and computes the loss in
a closure that runs the DDP wrapper's forward. Asking the module for its device runs no
forward: the wrapper's all-reduce is armed by `model(...)` in `calc_loss`.
"""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class UtteranceClassifier(nn.Module):
    def __init__(self, width=384, emotions=7):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(768, width), nn.GELU())
        self.predictor = nn.Linear(width, emotions)

    def device(self):
        return next(self.parameters()).device

    def forward(self, features):
        return self.predictor(self.encoder(features))


def train(model, loader, optimizer, epochs):
    inner_model = model.module

    def calc_loss(features, labels):
        return F.cross_entropy(model(features), labels)

    for epoch in range(epochs):
        loader.sampler.set_epoch(epoch)
        for batch in loader:
            features, labels = [x.to(inner_model.device()) for x in batch]
            loss = calc_loss(features, labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(UtteranceClassifier().cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    data = TensorDataset(torch.randn(4000, 768), torch.randint(0, 7, (4000,)))
    loader = DataLoader(data, batch_size=32, sampler=DistributedSampler(data, shuffle=True))
    train(model, loader, optimizer, epochs=5)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
