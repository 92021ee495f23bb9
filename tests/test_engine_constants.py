"""`engine.constants`: an expression that certainly holds a constant, wherever its value
comes from (DDP016 asks it of `find_unused_parameters=`, DDP023 of an autocast's dtype)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from ddplint.engine import Resolver, SemanticModel
from ddplint.engine.constants import certainly, certainly_true


def _last_call_argument(source: str) -> tuple[Resolver, cst.BaseExpression, cst.Call]:
    model = SemanticModel(cst.parse_module(textwrap.dedent(source)))
    call = next(c for c in reversed(model.calls) if model.module.code_for_node(c.func) == "use")
    return Resolver(model), call.args[0].value, call


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("use(True)", True),
        ("use(False)", False),
        ("flag = True\nuse(flag)", True),
        ("flag = True\nflag = False\nuse(flag)", False),
        ("flag = False\nif cfg.multi_task:\n    flag = True\nuse(flag)", False),
        ("flag = True if fast else True\nuse(flag)", True),
        ("def wanted():\n    return True\nuse(wanted())", True),
        ("def wanted():\n    return option\nuse(wanted())", False),
        ("use(args.find_unused)", False),
        ("use(unknown())", False),
        # A parameter: a caller in another module may pass anything.
        ("def wrap(flag=True):\n    use(flag)", False),
        ("def wrap(flag):\n    use(flag)\nwrap(True)", False),
    ],
)
def test_certainly_true(source, expected):
    resolver, expr, call = _last_call_argument(source)
    assert certainly_true(resolver, expr, call) is expected


def test_certainly_asks_the_given_question_of_every_value():
    source = """
    import torch
    dtype = torch.bfloat16
    if small:
        dtype = torch.float16
    use(dtype)
    """
    resolver, expr, call = _last_call_argument(source)
    imports = resolver.model.imports
    assert certainly(resolver, expr, call, lambda v: imports.resolve(v) is not None)
    assert not certainly(resolver, expr, call, lambda v: imports.resolve(v) == "torch.bfloat16")
