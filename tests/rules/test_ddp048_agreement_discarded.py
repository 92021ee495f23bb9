"""DDP048: values agreed across ranks by a helper whose result is dropped."""

from __future__ import annotations

import textwrap

from ddplint.api import lint_source

SOURCE = """\
import time
import torch
import torch.distributed as dist

def agree(stop):
    t = torch.tensor([float(stop)], device="cuda")
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.item() > 0

def train(model, loader, optimizer, deadline):
    for step, batch in enumerate(loader):
        model(batch).mean().backward()
        optimizer.step()
        stop = time.time() > deadline
        {agreement}
        if stop:
            break
"""


def findings(agreement: str) -> list[int]:
    source = textwrap.dedent(SOURCE).replace("{agreement}", agreement)
    return [d.start.row for d in lint_source(source, select=["DDP048"])]


def test_dropped_agreement_before_a_loop_exit():
    assert findings("agree(stop)") == [15]


def test_assigned_agreement_is_left_alone():
    assert findings("stop = agree(stop)") == []


def test_agreement_under_a_condition_is_left_alone():
    assert findings("if step % 10 == 0:\n            agree(stop)") == []


def test_message_names_the_flag_and_the_exit():
    source = textwrap.dedent(SOURCE).replace("{agreement}", "agree(stop)")
    (finding,) = lint_source(source, select=["DDP048"])
    assert "`agree(...)`" in finding.message
    assert "`stop` keeps this rank's own value" in finding.message
    assert "`break` on `stop`" in finding.message


def test_helper_reducing_a_part_of_its_argument_in_place_is_left_alone():
    source = """\
import torch
import torch.distributed as dist

def sync_meter(meter):
    dist.all_reduce(meter.total)
    return meter.total.item()

def train(model, loader, optimizer, meter):
    for batch in loader:
        model(batch).mean().backward()
        optimizer.step()
        meter = meter.update(batch)
        sync_meter(meter)
        if meter.total.item() > 100:
            break
"""
    assert lint_source(source, select=["DDP048"]) == []
