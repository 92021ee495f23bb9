"""Freezes the embedding layers by name, through the wrapper's `named_parameters()`."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(1000, 64)
        self.classifier = nn.Linear(64, 9)

    def forward(self, tokens):
        return self.classifier(self.embedding(tokens).mean(1))


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(Tagger().cuda(local_rank), device_ids=[local_rank])
    for name, param in model.named_parameters():
        if "embedding" in name:
            param.requires_grad = False  # expect: DDP046
    optimizer = torch.optim.Adam((p for p in model.parameters() if p.requires_grad), lr=1e-3)
    data = TensorDataset(torch.randint(0, 1000, (2048, 12)), torch.randint(0, 9, (2048,)))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=64, sampler=sampler)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for tokens, tags in loader:
            loss = nn.functional.cross_entropy(model(tokens.cuda()), tags.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
