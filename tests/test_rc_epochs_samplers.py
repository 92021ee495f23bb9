"""Samplers the model finds beyond a plain `DistributedSampler(...)` call: a class picked by
a conditional (`sampler_cls(train_set)`) and a DataLoader subclass that builds its own
sampler; each decides DDP002 (and DDP035) as the plain call does."""

from __future__ import annotations

import textwrap

from ddplint.api import fix_source, lint_source

ALIAS = textwrap.dedent(
    """
    import os
    import torch
    import torch.distributed as dist
    from torch.utils.data import DataLoader, DistributedSampler, RandomSampler

    def main(data, step):
        distributed = "LOCAL_RANK" in os.environ
        if distributed:
            dist.init_process_group("nccl")
        sampler_cls = DistributedSampler if distributed else RandomSampler
        loader = DataLoader(data, batch_size=8, sampler=sampler_cls(data), drop_last=True)
        for epoch in range(10):
            {set_epoch}
            for batch in loader:
                step(batch)
    """
)

SUBCLASS = textwrap.dedent(
    """
    import torch.distributed as dist
    from torch.utils.data import DataLoader, DistributedSampler

    class ShardLoader(DataLoader):
        def __init__(self, dataset, batch_size, train=True):
            sampler = DistributedSampler(dataset) if train else None
            super().__init__(dataset, batch_size=batch_size, sampler=sampler)

    def main(data, step):
        dist.init_process_group("nccl")
        loader = ShardLoader(data, 8, train={train})
        for epoch in range(10):
            for batch in loader:
                step(batch)
    """
)


def codes(source: str) -> list[str]:
    return [d.code for d in lint_source(source, select=["DDP002"])]


def test_sampler_class_alias_without_set_epoch_is_flagged_without_a_fix():
    source = ALIAS.replace("{set_epoch}", "pass")
    assert codes(source) == ["DDP002"]
    # `loader.sampler` is a RandomSampler (no `set_epoch`) on one path: no fix is offered
    assert fix_source(source, select=["DDP002"]) == source


def test_sampler_class_alias_with_set_epoch_is_silent():
    source = ALIAS.replace(
        "{set_epoch}", "if distributed:\n                loader.sampler.set_epoch(epoch)"
    )
    assert codes(source) == []


def test_loader_subclass_building_its_sampler_is_a_loader_on_it():
    assert codes(SUBCLASS.replace("{train}", "True")) == ["DDP002"]


def test_loader_subclass_told_not_to_build_the_sampler_is_silent():
    assert codes(SUBCLASS.replace("{train}", "False")) == []


HELPER = textwrap.dedent(
    """
    import torch.distributed as dist
    from torch.utils.data import DataLoader, DistributedSampler

    def build_loader(dataset, batch_size):
        sampler = DistributedSampler(dataset)
        return DataLoader(dataset, batch_size=batch_size, sampler=sampler, drop_last=True)

    def main(dataset, stages, step, epochs):
        dist.init_process_group("nccl")
        for epoch in range(epochs):
            loader = build_loader({given}, 32)
            for batch in loader:
                step(batch)
    """
)


def test_loader_rebuilt_each_epoch_by_a_helper_says_so_and_offers_no_fix():
    source = HELPER.replace("{given}", "dataset")
    found = lint_source(source, select=["DDP002"])
    assert [d.code for d in found] == ["DDP002"]
    assert "new shuffling DistributedSampler in every pass (through `build_loader()`)" in (
        found[0].message
    )
    # `loader.sampler.set_epoch(epoch)` at the top of the loop would read the loader
    # before this pass builds it
    assert fix_source(source, select=["DDP002"]) == source


def test_loader_rebuilt_each_epoch_from_that_epochs_data_is_silent():
    assert codes(HELPER.replace("{given}", "stages[epoch]")) == []
