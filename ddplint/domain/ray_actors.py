"""Ray actors and tasks (`@ray.remote` classes and functions): each runs in a worker process
of its own. Given GPUs (`num_gpus=1`), Ray sets `CUDA_VISIBLE_DEVICES` to them, so `cuda:0`
is the actor's own GPU; an actor class made one at a time is one process."""

from __future__ import annotations

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.ddp_facts import keyword

_REMOTE = "ray.remote"


def _remote(ctx: FileContext, node: cst.ClassDef | cst.FunctionDef) -> cst.BaseExpression | None:
    """The `@ray.remote` / `@ray.remote(...)` decorator of `node`, if any."""
    for decorator in node.decorators:
        expr = decorator.decorator
        if ctx.qualname(expr.func if type(expr) is cst.Call else expr) == _REMOTE:
            return expr
    return None


def _actor(
    ctx: FileContext, node: cst.CSTNode
) -> tuple[cst.ClassDef | cst.FunctionDef, cst.BaseExpression] | None:
    """The innermost `@ray.remote` class or function `node` is in, with its decorator."""
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, (cst.ClassDef, cst.FunctionDef)):
            remote = _remote(ctx, ancestor)
            if remote is not None:
                return ancestor, remote
    return None


def on_own_gpus(ctx: FileContext, node: cst.CSTNode) -> bool:
    """`node` runs in a Ray actor or task given GPUs (`@ray.remote(num_gpus=1)`): the
    GPUs it sees are its own, numbered from 0."""
    found = _actor(ctx, node)
    return (
        found is not None
        and type(found[1]) is cst.Call
        and keyword(found[1], "num_gpus") is not None
    )


def in_single_actor(ctx: FileContext, node: cst.CSTNode) -> bool:
    """`node` is in a Ray actor class this file makes one at a time (each function that
    makes it calls `Actor.remote(...)` once, in no loop or comprehension): one process,
    not one per rank."""
    found = _actor(ctx, node)
    if found is None or type(found[0]) is not cst.ClassDef:
        return False
    name = found[0].name.value
    made = [
        call
        for call in ctx.method_calls("remote")
        if type(call.func) is cst.Attribute
        and type(call.func.value) is cst.Name
        and call.func.value.value == name
    ]
    makers = [ctx.enclosing_function(call) for call in made]
    return (
        bool(made)
        and len(set(makers)) == len(makers)
        and not any(
            isinstance(a, (cst.For, cst.While, cst.BaseComp))
            for call in made
            for a in ctx.ancestors(call)
        )
    )
