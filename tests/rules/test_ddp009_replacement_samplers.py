"""DDP009 on samplers that draw with replacement: a `RandomSampler` walks the whole dataset
on every rank (reported), while a `WeightedRandomSampler` or a `RandomSampler(...,
replacement=True)` draws `num_samples` indices from the rank's own generator: it walks no
whole dataset, and whether the ranks draw alike is their seeds' question (silent)."""

from __future__ import annotations

import pytest

from ddplint.api import lint_source

SCRIPT = """\
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, RandomSampler, TensorDataset, WeightedRandomSampler

def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    data = TensorDataset(torch.load("features.pt"), torch.load("targets.pt"))
    weights = torch.ones(1024)
    model = DDP(nn.Linear(8, 1).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = DataLoader(data, batch_size=32, sampler={sampler})
    for epoch in range(10):
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

if __name__ == "__main__":
    main()
"""


def reported(sampler: str) -> bool:
    source = SCRIPT.format(sampler=sampler)
    return any(d.code == "DDP009" for d in lint_source(source, select=["DDP009"]))


@pytest.mark.parametrize(
    ("sampler", "flagged"),
    [
        ("RandomSampler(data)", True),
        ("RandomSampler(data, replacement=False)", True),
        ("RandomSampler(data, replacement=True)", False),
        ("WeightedRandomSampler(weights, len(data))", False),
        ("WeightedRandomSampler(weights, len(data), replacement=False)", False),
    ],
)
def test_samplers_drawing_with_replacement_walk_no_whole_dataset(
    sampler: str, flagged: bool
) -> None:
    assert reported(sampler) is flagged
