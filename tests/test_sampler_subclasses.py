"""A subclass of DistributedSampler that keeps its order (no `__iter__` of its own, or one
drawing from `super().__iter__()`, as a sampler that resumes mid-epoch does) is a
DistributedSampler to the rules, in the file or in another project module; one with its
own order is not. How it shuffles comes from its `__init__`'s `shuffle` parameter."""

from __future__ import annotations

import pytest

RESUMABLE = """\
import itertools

from torch.utils.data import DistributedSampler


class ResumableSampler(DistributedSampler):
    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0):
        super().__init__(dataset, num_replicas, rank, shuffle, seed)
        self.skip = 0

    def __iter__(self):
        return itertools.islice(super().__iter__(), self.skip, None)
"""

OWN_ORDER = """\
from torch.utils.data import DistributedSampler


class ChunkSampler(DistributedSampler):
    def __iter__(self):
        return iter(range(self.rank, len(self.dataset), self.num_replicas))
"""

TRAIN = """\
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader

{sampler_import}


def main(dataset, net, epochs):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    model = DistributedDataParallel(net.cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    sampler = {sampler_class}(dataset{shuffle})
    loader = DataLoader(dataset, batch_size=32, sampler=sampler)
    for epoch in range(epochs):
{set_epoch}        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
"""


def ddp002(cli, write, sampler_module: str, sampler_class: str, in_file: bool, **parts) -> list:
    write("pyproject.toml", '[project]\nname = "subclass"\nversion = "0.1"\n')
    if in_file:
        sampler_import = sampler_module.replace(
            "from torch.utils.data import DistributedSampler\n", ""
        )
        sampler_import = "from torch.utils.data import DistributedSampler\n" + sampler_import
    else:
        write("samplers.py", sampler_module)
        sampler_import = f"from samplers import {sampler_class}"
    source = TRAIN.format(
        sampler_import=sampler_import,
        sampler_class=sampler_class,
        shuffle=parts.get("shuffle", ""),
        set_epoch=parts.get("set_epoch", ""),
    )
    path = write("train.py", source)
    result = cli("check", "--exit-zero", "--select", "DDP002", "--output-format", "json", str(path))
    assert result.code == 0, result.err
    return [d["location"]["row"] for d in result.json()]


@pytest.mark.parametrize("in_file", [True, False])
def test_a_subclass_that_keeps_the_order_needs_set_epoch(cli, write, in_file):
    assert len(ddp002(cli, write, RESUMABLE, "ResumableSampler", in_file)) == 1


@pytest.mark.parametrize("in_file", [True, False])
def test_set_epoch_on_the_subclass_or_no_shuffle_is_left_alone(cli, write, in_file):
    set_epoch = "        sampler.set_epoch(epoch)\n"
    assert ddp002(cli, write, RESUMABLE, "ResumableSampler", in_file, set_epoch=set_epoch) == []
    assert (
        ddp002(cli, write, RESUMABLE, "ResumableSampler", in_file, shuffle=", shuffle=False") == []
    )
    assert (
        ddp002(cli, write, RESUMABLE, "ResumableSampler", in_file, shuffle=", None, None, False")
        == []
    )


@pytest.mark.parametrize("in_file", [True, False])
def test_a_subclass_with_its_own_order_is_not_a_distributed_sampler(cli, write, in_file):
    assert ddp002(cli, write, OWN_ORDER, "ChunkSampler", in_file) == []
