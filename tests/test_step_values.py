"""The values one training step computes (DDP011's step_values), built on the domain's one
definition of what reaches `backward()`, as DDP011 sees them."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from ddplint.api import lint_source
from ddplint.context import FileContext
from ddplint.domain import domain_of
from ddplint.domain.step_values import step_values

HEADER = """\
import torch
import torch.distributed as dist
"""


def _values(body: str) -> tuple[set[str], str | None]:
    """The step values of the only backward call of `body` (its loop, else its function),
    and the code of the statement where the forward starts."""
    source = HEADER + textwrap.dedent(body)
    ctx = FileContext("train.py", source, cst.parse_module(source))
    [site] = domain_of(ctx).backward.sites
    region = ctx.enclosing_loop(site.call) or ctx.scope(site.call)
    found = step_values(ctx, region, site.call)
    start = ctx.code(found.start).strip() if found.start is not None else None
    return set(found.names), start


def _ddp011(body: str) -> list[int]:
    source = HEADER + textwrap.dedent(body)
    offset = HEADER.count("\n")
    return [d.start.row - offset for d in lint_source(source, select=["DDP011"])]


def test_loss_its_inputs_and_derived_values_but_not_the_batch():
    names, start = _values(
        """\
        for x, y in loader:
            x = x.cuda(non_blocking=True)
            out = model(x)
            loss = criterion(out, y)
            bad = torch.isnan(loss).any()
            loss.backward()
        """
    )
    assert names == {"out", "loss", "bad"}
    assert start == "out = model(x)"


def test_the_grad_scaler_is_not_a_value_of_the_step():
    body = """\
    def train_step(self, model, x):
        scaler = self.scaler
        if scaler.get_scale() < 1.0:
            return None
        loss = model(x).sum()
        scaler.scale(loss).backward()
    """
    names, start = _values(body)
    assert names == {"loss"}
    assert start == "loss = model(x).sum()"
    assert _ddp011(body) == []  # a skip on the (shared) loss scale before the forward


def test_accelerate_backward_differentiates_its_argument():
    body = """\
    for batch in loader:
        loss = model(**batch).loss
        if torch.isnan(loss):
            continue
        accelerator.backward(loss)
    """
    names, _ = _values(body)
    assert names == {"loss"}
    assert _ddp011(body) == [4]  # a rank that skips leaves the others in the all-reduce


def test_a_value_reassigned_before_the_forward_does_not_start_it():
    names, start = _values(
        """\
        def step(model, x):
            loss = 0.0
            if x.numel() == 0:
                return loss
            loss = model(x).sum()
            loss.backward()
        """
    )
    assert names == {"loss"}
    assert start == "loss = model(x).sum()"


def test_what_a_state_object_handed_in_holds_is_not_computed_by_the_step():
    body = """\
    def backward(self, context, state):
        state.backwards_done += 1
        activations = state.pop_activations()
        if len(activations) == 0:
            return
        with context:
            sum(activations).backward()
    """
    assert _values(body) == (set(), None)
    assert _ddp011(body) == []  # the schedule, not this rank's data, empties the state


def test_a_state_object_the_step_feeds_holds_its_forward():
    names, start = _values(
        """\
        def step(self, state, model, x):
            state.register(model(x).sum())
            activations = state.pop_activations()
            sum(activations).backward()
        """
    )
    assert names == {"activations"}
    assert start == "activations = state.pop_activations()"


def test_a_loss_read_off_the_model_after_its_forward_is_the_steps():
    body = """\
    for x, y in loader:
        model(x, y)
        loss = model.last_loss
        if torch.isnan(loss):
            continue
        loss.backward()
    """
    assert _values(body)[0] == {"loss"}
    assert _ddp011(body) == [5]


def test_the_size_of_a_models_output_is_the_steps():
    body = """\
    def step(self, images, targets):
        detections = self.model(images)
        if len(detections) == 0:
            return None
        self.criterion(detections, targets).backward()
    """
    assert _values(body)[0] == {"detections"}
    assert _ddp011(body) == [4]


def _ddp011_unproven(body: str) -> list[bool]:
    source = HEADER + textwrap.dedent(body)
    return [d.unproven for d in lint_source(source, select=["DDP011"])]


NAN_SKIP = """\
{build}
for x in loader:
    loss = model(x).sum()
    if torch.isnan(loss):
        continue
    loss.backward()
"""


def test_skip_is_proven_only_on_a_step_through_a_ddp_model():
    """The hang needs DDP's gradient all-reduce inside the skipped backward: proven when the
    step runs a DDP-wrapped model, unproven when the model comes from out of sight or is a
    temporary one built without DDP (a batch-size probe)."""
    wrapped = "model = torch.nn.parallel.DistributedDataParallel(Net().cuda())"
    assert _ddp011_unproven(NAN_SKIP.format(build=wrapped)) == [False]
    handed = wrapped + "\ndef loss_of(m, x):\n    return m(x).sum()\n"
    probe = NAN_SKIP.format(build=handed).replace("model(x).sum()", "loss_of(model, x)")
    assert _ddp011_unproven(probe) == [False]
    assert _ddp011_unproven(NAN_SKIP.format(build="model = build(ddp=False)")) == [True]
    assert _ddp011_unproven(NAN_SKIP.format(build="model = Net()")) == [True]


BUILT_BY_FLAG = """\
from torch.nn.parallel import DistributedDataParallel as DDP


class Exp:
    def _build_model(self, ddp=True):
        model = Net().cuda()
        if ddp:
            model = DDP(model)
        return model

    def probe(self, loader):
        model_tmp = self._build_model({passed})
        for x in loader:
            loss = model_tmp(x).sum()
            if torch.isnan(loss):
                break
            loss.backward()
"""


@pytest.mark.parametrize(
    ("passed", "unproven"), [("ddp=False", True), ("False", True), ("", False), ("ddp=True", False)]
)
def test_a_builder_called_with_its_wrap_flag_off_returns_no_ddp_model(passed, unproven):
    """`self._build_model(ddp=False)` takes the branch without the wrap: the batch-size
    probe on that temporary model is not proven to skip a DDP all-reduce."""
    assert _ddp011_unproven(BUILT_BY_FLAG.format(passed=passed)) == [unproven]
