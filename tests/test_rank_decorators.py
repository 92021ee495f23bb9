"""Decorators read from their definition: a function decorated with one runs on the main
process only when the wrapper calls it only under a gate that holds on rank 0 alone
(`Gates.main_only_decorator`, which DDP013 and the hang rules rely on)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from ddplint.context import FileContext
from ddplint.domain import domain_of

HEADER = """
import functools
import torch.distributed as dist
"""


def _gated(decorator: str) -> bool:
    source = HEADER + textwrap.dedent(decorator) + "\n@deco\ndef save():\n    pass\n"
    ctx = FileContext("t.py", source, cst.parse_module(source))
    (func,) = ctx.functions["save"]
    return domain_of(ctx).gates.main_only_decorator(func) is not None


MAIN_ONLY = {
    "rank 0 only": """
        def deco(fn):
            @functools.wraps(fn)
            def wrapper(*args, **kwargs):
                if dist.get_rank() == 0:
                    return fn(*args, **kwargs)
            return wrapper
    """,
    "early return elsewhere": """
        def deco(fn):
            def wrapper(*args):
                if dist.get_rank() != 0:
                    return None
                return fn(*args)
            return wrapper
    """,
}

EVERY_RANK = {
    "no rank test": """
        def deco(fn):
            def wrapper(*args):
                return fn(*args)
            return wrapper
    """,
    "all ranks but the first": """
        def deco(fn):
            def wrapper(*args):
                if dist.get_rank() != 0:
                    return fn(*args)
            return wrapper
    """,
    "also called ungated": """
        def deco(fn):
            def wrapper(*args):
                if dist.get_rank() == 0:
                    fn(*args)
                return fn(*args)
            return wrapper
    """,
    "the function itself returned": """
        def deco(fn):
            def wrapper(*args):
                if dist.get_rank() == 0:
                    return fn(*args)
            return wrapper if dist.is_initialized() else fn
    """,
    "called by the decorator": """
        def deco(fn):
            fn()
            def wrapper(*args):
                if dist.get_rank() == 0:
                    return fn(*args)
            return wrapper
    """,
}


@pytest.mark.parametrize("decorator", MAIN_ONLY.values(), ids=MAIN_ONLY)
def test_wrapper_calling_under_a_main_gate_runs_on_rank_zero(decorator):
    assert _gated(decorator)


@pytest.mark.parametrize("decorator", EVERY_RANK.values(), ids=EVERY_RANK)
def test_other_wrappers_run_on_every_rank(decorator):
    assert not _gated(decorator)
