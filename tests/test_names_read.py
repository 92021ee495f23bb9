"""`FileContext.names_in`: the dotted names an expression reads. An attribute's own name
(`loss` of `cfg.optim.loss`) and a keyword (`loss=` of `f(loss=x)`) read no name: a test
on a configuration value is no test on the step's `loss` (DDP010, amp-prune)."""

from __future__ import annotations

import libcst as cst

from ddplint.api import lint_source
from ddplint.context import FileContext


def _names(expression: str) -> set[str]:
    source = f"x = {expression}\n"
    ctx = FileContext("t.py", source, cst.parse_module(source))
    statement = ctx.module.body[0]
    assert isinstance(statement, cst.SimpleStatementLine)
    assign = statement.body[0]
    assert isinstance(assign, cst.Assign)
    return set(ctx.names_in(assign.value))


def test_an_attribute_reads_its_object_not_its_own_name() -> None:
    assert _names("cfg.optim.loss == 'mse'") == {"cfg", "cfg.optim", "cfg.optim.loss"}


def test_a_keyword_is_no_name_read() -> None:
    assert _names("f(loss=weight)") == {"f", "weight"}


CONFIG_TEST = """
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def train(cfg, model, loader, optimizer):
    model = DDP(model)
    for x, y in loader:
        pred = model(x)
        if cfg.optim.loss == "gathered":
            everyone = [torch.zeros_like(pred) for _ in range(dist.get_world_size())]
            dist.all_gather(everyone, pred)
            pred = torch.cat(everyone)
        loss = (pred - y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""


def test_a_test_on_a_configuration_value_is_not_the_steps() -> None:
    assert lint_source(CONFIG_TEST, select=["DDP010"]) == []
