"""Epoch order read without an epoch loop (DDP002), metrics from one shard (DDP038) and
early stops decided on them (DDP039), through `lint_source`."""

from __future__ import annotations

import textwrap

import pytest
from source_rows import line_of, rows

from ddplint.api import lint_source

HEADER = """\
import itertools
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler
"""


def src(body: str, header: str = HEADER) -> str:
    return header + textwrap.dedent(body)


# -- DDP002: passes with no epoch counter -------------------------------------------------


def test_ddp002_torch_reached_through_a_star_import_is_torch():
    source = src(
        """
        def main(ds, step):
            dist.init_process_group("nccl")
            sampler = torch.utils.data.distributed.DistributedSampler(ds)
            loader = torch.utils.data.DataLoader(ds, sampler=sampler)
            for epoch in range(10):
                for batch in loader:
                    step(batch)
        """,
        header="import torch.distributed as dist\nfrom config import *\n",
    )
    assert rows(source, "DDP002") == [line_of(source, "for epoch")]


@pytest.mark.parametrize(("shuffle", "expected"), [("True", 1), ("False", 0)])
def test_ddp002_a_factory_sampler_shuffles_as_its_call_says(shuffle, expected):
    source = src(
        f"""
        def make_sampler(ds, shuffle):
            return DistributedSampler(ds, shuffle=shuffle, drop_last=True)

        def forever(loader):
            while True:
                for batch in loader:
                    yield batch

        def main(ds, step):
            dist.init_process_group("nccl")
            loader = DataLoader(ds, sampler=make_sampler(ds, shuffle={shuffle}))
            stream = forever(loader)
            for i in range(1000):
                step(next(stream))
        """
    )
    assert len(rows(source, "DDP002")) == expected


def test_ddp002_cycle_says_the_batches_are_replayed():
    source = src(
        """
        def main(ds, step):
            dist.init_process_group("nccl")
            loader = DataLoader(ds, sampler=DistributedSampler(ds, drop_last=True))
            batches = itertools.cycle(loader)
            for i in range(1000):
                step(next(batches))
        """
    )
    (finding,) = lint_source(source, select=["DDP002"])
    assert finding.start.row == line_of(source, "itertools.cycle")
    assert "replays the batches of its first pass" in finding.message


def test_ddp002_an_endless_read_is_left_alone_where_the_file_sets_epochs():
    source = src(
        """
        def main(ds, step, steps_per_epoch):
            dist.init_process_group("nccl")
            sampler = DistributedSampler(ds, drop_last=True)
            loader = DataLoader(ds, sampler=sampler)
            it = iter(loader)
            for i in range(100_000):
                try:
                    batch = next(it)
                except StopIteration:
                    sampler.set_epoch(i // steps_per_epoch)
                    it = iter(loader)
                    batch = next(it)
                step(batch)
        """
    )
    assert rows(source, "DDP002") == []


# -- DDP038: metrics from one shard -------------------------------------------------------

EVALUATE = """
@torch.no_grad()
def evaluate(model, loader):
    total = 0.0
    for x, y in loader:
        total += (model(x) - y).abs().mean().item()
    return total / len(loader)
"""


def test_ddp038_the_returned_shard_loss_picking_the_best_model_is_reported():
    source = src(
        EVALUATE
        + """
def main(model, val_set, best):
    dist.init_process_group("nccl")
    loader = DataLoader(val_set, sampler=DistributedSampler(val_set, shuffle=False))
    loss = evaluate(model, loader)
    if loss < best:
        torch.save(model.module.state_dict(), "best.pt")
"""
    )
    (finding,) = lint_source(source, select=["DDP038"])
    assert finding.start.row == line_of(source, "if loss < best")
    assert "1/N of the evaluation set" in finding.message
    assert "`evaluate()`" in finding.message


@pytest.mark.parametrize(
    "combine",
    [
        "loss = reduce_tensor(torch.tensor(loss)).item()",
        "loss = accelerator.gather_for_metrics(loss)",
    ],
)
def test_ddp038_a_value_combined_by_the_caller_is_left_alone(combine):
    source = src(
        EVALUATE
        + f"""
def main(model, val_set, best, accelerator):
    dist.init_process_group("nccl")
    loader = DataLoader(val_set, sampler=DistributedSampler(val_set, shuffle=False))
    loss = evaluate(model, loader)
    {combine}
    if loss < best:
        torch.save(model.module.state_dict(), "best.pt")
"""
    )
    assert rows(source, "DDP038") == []


def test_ddp038_a_log_line_that_names_the_rank_is_that_ranks_own():
    source = src(
        EVALUATE
        + """
def main(model, val_set):
    dist.init_process_group("nccl")
    loader = DataLoader(val_set, sampler=DistributedSampler(val_set, shuffle=False))
    print(f"rank {dist.get_rank()}: shard loss {evaluate(model, loader):.3f}")
"""
    )
    assert rows(source, "DDP038") == []


def test_ddp038_a_count_over_the_whole_dataset_is_left_to_ddp028():
    source = src(
        """
def main(model, test_set):
    dist.init_process_group("nccl")
    loader = DataLoader(test_set, sampler=DistributedSampler(test_set, shuffle=False))
    correct = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum().item()
    print(correct / len(test_set))
"""
    )
    assert rows(source, "DDP038") == []
    assert rows(source, "DDP028") == [line_of(source, "print(")]


# -- DDP039: early stop on one shard ------------------------------------------------------

STOP = """
def main(model, opt, train_loader, val_set, patience):
    dist.init_process_group("nccl")
    val_loader = DataLoader(val_set, sampler=DistributedSampler(val_set, shuffle=False))
    best, bad = float("inf"), 0
    for epoch in range(100):
        for x, y in train_loader:
            opt.zero_grad()
            (model(x) - y).abs().mean().backward()
            opt.step()
        loss = evaluate(model, val_loader)
        {combine}
        if loss < best:
            best, bad = loss, 0
        else:
            bad += 1
        if bad >= patience:
            break
"""


def test_ddp039_a_patience_counter_on_a_shard_loss_leaves_the_loop_on_one_rank():
    source = src(EVALUATE + STOP.format(combine="pass"))
    (finding,) = lint_source(source, select=["DDP039"])
    assert finding.start.row == line_of(source, "break")
    assert "gradient all-reduce" in finding.message


@pytest.mark.parametrize(
    "combine",
    [
        "loss = reduce_mean(loss)",
        "t = torch.tensor([loss]); dist.all_reduce(t); loss = t.item()",
    ],
)
def test_ddp039_a_combined_loss_decides_alike_on_every_rank(combine):
    assert rows(src(EVALUATE + STOP.format(combine=combine)), "DDP039") == []


def test_ddp039_a_break_out_of_the_evaluation_loop_is_no_early_stop():
    source = src(
        """
def main(model, opt, train_loader, val_set, limit):
    dist.init_process_group("nccl")
    val_loader = DataLoader(val_set, sampler=DistributedSampler(val_set, shuffle=False))
    for epoch in range(10):
        for x, y in train_loader:
            opt.zero_grad()
            model(x).sum().backward()
            opt.step()
        seen = 0
        with torch.no_grad():
            for x, y in val_loader:
                seen += len(y)
                if seen > limit:
                    break
"""
    )
    assert rows(source, "DDP039") == []


def test_ddp038_a_guard_against_an_empty_shard_or_a_logarithm_is_no_use_as_the_result():
    source = src(
        """
import math

def main(model, val_set):
    dist.init_process_group("nccl")
    loader = DataLoader(val_set, sampler=DistributedSampler(val_set, shuffle=False))
    nll = seen = 0
    with torch.no_grad():
        for x, y in loader:
            nll += model(x).sum().item()
            seen += len(y)
    mean = nll / seen if seen > 0 else 0.0
    perplexity = math.log(mean)
    return perplexity
"""
    )
    assert rows(source, "DDP038") == []


def test_ddp039_a_counter_broadcast_from_rank_zero_is_the_same_everywhere():
    source = src(
        EVALUATE
        + """
def main(model, opt, train_loader, val_set):
    dist.init_process_group("nccl")
    val_loader = DataLoader(val_set, sampler=DistributedSampler(val_set, shuffle=False))
    best, bad = float("inf"), torch.zeros(1)
    for epoch in range(100):
        for x, y in train_loader:
            opt.zero_grad()
            model(x).sum().backward()
            opt.step()
        loss = evaluate(model, val_loader)
        if loss < best:
            best, bad = loss, torch.zeros(1)
        else:
            bad += 1
        dist.broadcast(bad, src=0)
        if bad.item() >= 5:
            break
"""
    )
    assert rows(source, "DDP039") == []
