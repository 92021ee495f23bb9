"""Masked-token pretraining of a small molecule-language encoder.

The step runs the encoder piece by piece through the module inside the DDP wrapper
(`self.model.module.encoder.embed(...)`, then its blocks and head) to checkpoint the
blocks: the wrapper's forward never runs, so backward() all-reduces nothing and each rank
trains its own replica. One finding per step, at its first call through the module.
"""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.checkpoint import checkpoint
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Encoder(nn.Module):
    def __init__(self, vocab=600, width=256, depth=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.drop = nn.Dropout(0.1)
        layer = nn.TransformerEncoderLayer(width, 8, batch_first=True)
        self.blocks = nn.TransformerEncoder(layer, depth)
        self.head = nn.Linear(width, vocab)


class MolLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()

    def forward(self, tokens):
        e = self.encoder
        return e.head(e.blocks(e.drop(e.embed(tokens))))


class Pretrainer:
    def __init__(self, local_rank):
        self.local_rank = local_rank
        self.model = DDP(MolLM().cuda(local_rank), device_ids=[local_rank])
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=3e-4)

    def step(self, tokens, targets):
        tokens, targets = tokens.cuda(self.local_rank), targets.cuda(self.local_rank)
        x = self.model.module.encoder.embed(tokens)  # expect: DDP026
        x = self.model.module.encoder.drop(x)
        x = checkpoint(self.model.module.encoder.blocks, x, use_reentrant=False)
        logits = self.model.module.encoder.head(x)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        return loss.item()


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    data = TensorDataset(torch.randint(0, 600, (4096, 64)), torch.randint(0, 600, (4096, 64)))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    trainer = Pretrainer(local_rank)
    for epoch in range(10):
        sampler.set_epoch(epoch)
        for tokens, targets in loader:
            trainer.step(tokens, targets)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
