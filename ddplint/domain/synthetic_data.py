"""Synthetic data: a dataset whose samples are random tensors the script draws itself
(an object of a class of this file whose `__init__` draws its data with `torch.randn` and
reads nothing; `TensorDataset(torch.randn(n, d), ...)`), the stand-in for real data of a
smoke test, a benchmark or a tutorial. There is no dataset to duplicate across ranks, and
the order its samples come in teaches nothing."""

from __future__ import annotations

import re

import libcst as cst

from ddplint.context import FileContext

RANDOM_TENSORS = frozenset({"torch.randn", "torch.rand", "torch.randint", "torch.randperm"})
# Calls that bring real data in: a class calling one is no stand-in.
_READS = re.compile(r"load|read|open|listdir|glob|walk|imread|from_pretrained|Folder|fetch")


def draws_random_tensors(ctx: FileContext, expr: cst.CSTNode) -> bool:
    """`expr` calls one of torch's random-tensor factories somewhere inside it."""
    return any(
        type(node) is cst.Call and ctx.call_name(node) in RANDOM_TENSORS for node in ctx.walk(expr)
    )


def synthetic_class(ctx: FileContext, expr: cst.BaseExpression) -> str | None:
    """The name of the class of this file `expr` constructs when its `__init__` draws
    random tensors and no method of it reads data (`_READS`); else None."""
    if type(expr) is not cst.Call or type(expr.func) is not cst.Name:
        return None
    classes = ctx.model.classes.get(expr.func.value, [])
    if len(classes) != 1:
        return None
    cls = classes[0]
    inits = [
        f
        for f in ctx.nodes_within(cls, cst.FunctionDef)
        if type(f) is cst.FunctionDef
        and f.name.value == "__init__"
        and ctx.model.enclosing_class(f) is cls
    ]
    if len(inits) != 1 or not draws_random_tensors(ctx, inits[0]):
        return None
    for node in ctx.walk(cls):
        if type(node) is cst.Call:
            name = ctx.call_name(node) or ""
            if _READS.search(name.rpartition(".")[2]):
                return None
    return cls.name.value


def synthetic_dataset(ctx: FileContext, dataset: cst.BaseExpression, at: cst.CSTNode) -> str | None:
    """The name of the class making the dataset `dataset` (read at `at`) synthetic on every
    path it may take (`synthetic_class`); None where some value of it is not, or is out of
    sight. A `TensorDataset(torch.randn(...))` written in place is not counted: minimal
    examples hold real data that way."""
    values = [v.expr for v in ctx.resolver.values(dataset, at) if v.leaf]
    names = {synthetic_class(ctx, value) for value in values}
    if not values or None in names:
        return None
    return ", ".join(f"`{name}`" for name in sorted(n for n in names if n is not None))
