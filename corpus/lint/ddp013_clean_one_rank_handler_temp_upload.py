"""Checkpoint handlers of a trainer built on an event engine: one is wrapped by the
framework's `@one_rank_only()` decorator (rank 0 runs it), the other serialises into a fresh
`NamedTemporaryFile` of its own process before uploading the bytes, so no two ranks share a
file. Both are called on every rank."""
import os
import tempfile

import ignite.distributed as idist
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class LocalCopy:
    def __init__(self, path):
        self.path = path

    @idist.one_rank_only()
    def __call__(self, checkpoint):
        torch.save(checkpoint, self.path + ".part")
        os.replace(self.path + ".part", self.path)


class RemoteCopy:
    def __init__(self, client):
        self.client = client

    def __call__(self, checkpoint, name):
        with tempfile.NamedTemporaryFile(suffix=".pt") as tmp:
            torch.save(checkpoint, tmp.file)
            tmp.file.flush()
            self.client.upload(tmp.name, key=f"checkpoints/{name}")


def train(client, epochs=3):
    dist.init_process_group("gloo")
    model = DDP(nn.Linear(16, 4))
    optim = torch.optim.SGD(model.parameters(), lr=0.1)
    local, remote = LocalCopy("last.pt"), RemoteCopy(client)
    for epoch in range(epochs):
        for _ in range(50):
            loss = model(torch.randn(32, 16)).pow(2).mean()
            optim.zero_grad()
            loss.backward()
            optim.step()
        state = {"model": model.module.state_dict(), "epoch": epoch}
        local(state)
        remote(state, f"epoch{epoch}.pt")
    dist.destroy_process_group()
