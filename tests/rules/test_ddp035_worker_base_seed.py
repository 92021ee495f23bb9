"""DDP035 with a `worker_init_fn`: one that only re-derives torch's per-worker seed (the
loader's base seed, drawn from the main generator, plus the worker index) leaves the ranks'
workers in step, so the seed alike on every rank is still reported; one that adds the rank,
or does anything else, is a reseed of its own and silences it."""

from __future__ import annotations

import pytest

from ddplint.api import lint_source

SCRIPT = """\
import os
import random
import numpy as np
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, Dataset, DistributedSampler

def seed_worker(worker_id):
{body}

class Crops(Dataset):
    def __len__(self):
        return 1000

    def __getitem__(self, idx):
        return np.random.randint(0, 100), idx

def main():
    dist.init_process_group("nccl")
    torch.manual_seed(1234)
    data = Crops()
    loader = DataLoader(data, batch_size=8, sampler=DistributedSampler(data),
                        num_workers=4, worker_init_fn=seed_worker)
    for epoch in range(10):
        loader.sampler.set_epoch(epoch)
        for batch in loader:
            pass

if __name__ == "__main__":
    main()
"""


def seeds_reported(body: str) -> list[str]:
    found = lint_source(SCRIPT.format(body=body), select=["DDP035"])
    return [d.message.split("`")[1] for d in found if not d.unproven]


@pytest.mark.parametrize(
    "body",
    [
        "    np.random.seed(torch.initial_seed() % 2**32)",
        "    seed = torch.initial_seed() % 2**31 + worker_id\n"
        "    random.seed(seed)\n    np.random.seed(seed)",
        "    info = torch.utils.data.get_worker_info()\n    np.random.seed(info.seed % 2**32)",
    ],
    ids=["initial-seed", "plus-index", "worker-info-seed"],
)
def test_a_worker_seed_derived_from_the_base_seed_keeps_the_report(body: str):
    assert seeds_reported(body) == ["torch.manual_seed(1234)"]


@pytest.mark.parametrize(
    "body",
    [
        "    np.random.seed(torch.initial_seed() % 2**32 + dist.get_rank())",
        "    np.random.seed(int.from_bytes(os.urandom(4), 'little'))",
        "    np.random.seed(torch.initial_seed() % 2**32)\n    reset_augmenter()",
    ],
    ids=["plus-rank", "os-entropy", "other-call"],
)
def test_a_worker_seed_of_its_own_silences_it(body: str):
    assert seeds_reported(body) == []
