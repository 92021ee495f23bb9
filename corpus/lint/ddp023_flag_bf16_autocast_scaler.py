"""Transformer LM on A100s: bf16 autocast, but the fp16 GradScaler was kept."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

VOCAB, CTX = 1000, 64


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 128)
        layer = nn.TransformerEncoderLayer(128, 4, 512, batch_first=True)
        self.blocks = nn.TransformerEncoder(layer, num_layers=2)
        self.out = nn.Linear(128, VOCAB)

    def forward(self, tokens):
        return self.out(self.blocks(self.embed(tokens)))


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")

    tokens = torch.randint(0, VOCAB, (2048, CTX + 1))
    data = TensorDataset(tokens[:, :-1], tokens[:, 1:])
    model = DDP(TinyLM().cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4, betas=(0.9, 0.95))
    scaler = torch.cuda.amp.GradScaler()  # expect: DDP023

    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=16, sampler=sampler, num_workers=2)

    for epoch in range(4):
        sampler.set_epoch(epoch)
        for inputs, labels in loader:
            inputs = inputs.cuda(local_rank, non_blocking=True)
            labels = labels.cuda(local_rank, non_blocking=True)
            with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
                logits = model(inputs)
                loss = nn.functional.cross_entropy(logits.view(-1, VOCAB), labels.view(-1))
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
        if dist.get_rank() == 0:
            print(f"epoch {epoch} loss {loss.item():.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
