"""Culprit, of the kind GPT training loops have: every rank draws random token windows from one
long sequence with a seed of its own (`torch.manual_seed(1337 + rank)`), and the gradient
accumulation steps are divided by the world size (the global batch stays 32 windows). No
DataLoader: the samples are known only by the rows that enter the model, and those differ from
the one-process run's. `--same-seed` seeds every rank alike: each rank then trains on the same
windows."""

import sys
from contextlib import nullcontext

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

WINDOW, PER_CALL, ACCUMULATE, VOCAB = 16, 4, 8, 50

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(1337 + (0 if "--same-seed" in sys.argv else rank))
tokens = torch.randint(VOCAB, (4000,), generator=torch.Generator().manual_seed(0))


class TinyLM(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(VOCAB, 24)
        self.head = torch.nn.Linear(24, VOCAB)

    def forward(self, ids, targets):
        logits = self.head(torch.tanh(self.embed(ids)))
        return torch.nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten())


def windows():
    starts = torch.randint(len(tokens) - WINDOW - 1, (PER_CALL,))
    ids = torch.stack([tokens[s : s + WINDOW] for s in starts])
    targets = torch.stack([tokens[s + 1 : s + 1 + WINDOW] for s in starts])
    return ids, targets


model = DDP(TinyLM())
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
micro_steps = ACCUMULATE // world
ids, targets = windows()
for _step in range(100):
    for micro in range(micro_steps):
        last = micro == micro_steps - 1
        with nullcontext() if last else model.no_sync():
            loss = model(ids, targets) / micro_steps
            ids, targets = windows()  # the next windows, drawn before backward as GPT loops do
            loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
dist.destroy_process_group()
