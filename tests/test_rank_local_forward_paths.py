"""DDP021 on a forward in a helper that both training and a rank-0 evaluation call: the
rank-local path decides what the forward issues. Reached through a call made with
gradients off (`with torch.no_grad(): predict(model, x)` in `test`), it trains nothing
there: the buffers are the harm, not a gradient all-reduce (ES6D)."""

from __future__ import annotations

from ddplint.api import lint_source

SCRIPT = """
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 8), nn.BatchNorm1d(8))

    def forward(self, x):
        return self.body(x)


def predict(model, x):
    return model(x).sum()


def train(model, loader, optimizer):
    for x in loader:
        loss = predict(model, x)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def test(model, loader):
    {test_body}


def main(loader, rank, epochs):
    dist.init_process_group("nccl")
    model = DDP(Net().cuda(rank), device_ids=[rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        train(model, loader, optimizer)
        if rank == 0:
            test(model, loader)
"""

NO_GRAD = """with torch.no_grad():
        for x in loader:
            print(predict(model, x))"""
WITH_GRAD = """for x in loader:
        predict(model, x).backward()"""


def test_a_rank_local_path_without_gradients_names_the_buffers() -> None:
    (finding,) = lint_source(SCRIPT.format(test_body=NO_GRAD), select=["DDP021"])
    assert "the model holds buffers" in finding.message
    assert "reaches `backward()`" not in finding.message


def test_a_rank_local_path_with_gradients_names_the_backward() -> None:
    (finding,) = lint_source(SCRIPT.format(test_body=WITH_GRAD), select=["DDP021"])
    assert "reaches `backward()`" in finding.message
