"""Small causal language model; rank 0 prints a sampled continuation through the DDP wrapper.

The model registers no buffer (the causal mask comes from `is_causal=True`) and holds no
BatchNorm: with gradients off, DDP's forward has nothing to broadcast, so rank 0 sampling
alone issues no collective and cannot hang.
"""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

VOCAB, WIDTH, HEADS, DEPTH, CONTEXT = 512, 128, 4, 2, 64


class SelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(WIDTH, 3 * WIDTH)
        self.out = nn.Linear(WIDTH, WIDTH)

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, HEADS, -1).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(y.transpose(1, 2).reshape(b, t, WIDTH))


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(WIDTH), nn.LayerNorm(WIDTH)
        self.attn = SelfAttention()
        hidden = 4 * WIDTH
        self.mlp = nn.Sequential(nn.Linear(WIDTH, hidden), nn.GELU(), nn.Linear(hidden, WIDTH))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.tokens = nn.Embedding(VOCAB, WIDTH)
        self.positions = nn.Embedding(CONTEXT, WIDTH)
        self.layers = nn.ModuleList([Layer() for _ in range(DEPTH)])
        self.head = nn.Linear(WIDTH, VOCAB, bias=False)

    def forward(self, idx):
        x = self.tokens(idx) + self.positions(torch.arange(idx.shape[1], device=idx.device))
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


def sample(model, prompt, steps):
    for _ in range(steps):
        with torch.no_grad():
            logits = model(prompt[:, -CONTEXT:])
        nxt = torch.multinomial(F.softmax(logits[:, -1], dim=-1), 1)
        prompt = torch.cat([prompt, nxt], dim=1)
    return prompt


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    rank = dist.get_rank()

    model = DDP(TinyLM().cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    data = TensorDataset(torch.randint(0, VOCAB, (8192, CONTEXT + 1)))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=32, sampler=sampler)

    for epoch in range(4):
        sampler.set_epoch(epoch)
        for (tokens,) in loader:
            tokens = tokens.cuda(local_rank)
            logits = model(tokens[:, :-1])
            loss = F.cross_entropy(logits.reshape(-1, VOCAB), tokens[:, 1:].reshape(-1))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
        if rank == 0:
            start = torch.zeros(1, 1, dtype=torch.long, device=local_rank)
            print(sample(model, start, 20).tolist())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
