"""Collections whose size the data decides: what a mask selects (`x[x > t]`,
`torch.nonzero(m)`, `torch.where(m)`), a comprehension that filters, and what a model of
this file returns when its `forward` builds one. A test on such a size can differ between
ranks, each reading its own batch; the size of what a model returns otherwise (one loss per
head, a fixed number of outputs) is the model's, alike on every rank."""

from __future__ import annotations

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.ddp_facts import argument, facts_of, last_name
from ddplint.domain.model_layers import ModelLayers
from ddplint.engine.resolve import methods_named

# Calls returning what a mask selects: as many elements as the mask holds true.
_SELECTING = frozenset(
    {"nonzero", "argwhere", "masked_select", "unique", "unique_consecutive", "where"}
)
_DEPTH = 3


def data_sized(ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """`expr` may hold, at `at`, a collection whose size the data decides, following
    names through their bindings and models to their class's `forward`."""
    return _follows(ctx, expr, at, _DEPTH)


def _follows(ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode, depth: int) -> bool:
    for value in ctx.resolver.values(expr, at):
        if _selects(ctx, value.expr, value.at, depth):
            return True
    return False


def _selects(ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode, depth: int) -> bool:
    """`expr` itself selects by a mask or a filter, or is built from a name or a model's
    forward that does (`depth` more steps)."""
    for node in ctx.walk(expr):
        if _selects_here(ctx, node, at):
            return True
        if depth == 0:
            continue
        if type(node) is cst.Call and _model_selects(ctx, node, at, depth - 1):
            return True
        if (
            type(node) is cst.Name
            and node is not expr
            and not _attribute_name(ctx, node)
            and _follows(ctx, node, at, depth - 1)
        ):
            return True
    return False


def _selects_here(ctx: FileContext, node: cst.CSTNode, at: cst.CSTNode) -> bool:
    """`node` is a selecting call, a masked index, or a filtering comprehension."""
    if type(node) is cst.Call:
        return _selecting_call(node)
    if type(node) is cst.Subscript:
        return _masked(ctx, node, at)
    return type(node) is cst.CompFor and bool(node.ifs)


def _selecting_call(call: cst.Call) -> bool:
    name = last_name(call.func)
    if name == "where":
        return len(call.args) == 1  # `torch.where(cond, a, b)` keeps the shape
    return name in _SELECTING


def _masked(ctx: FileContext, subscript: cst.Subscript, at: cst.CSTNode) -> bool:
    """`x[x > t]`, `x[keep]` with `keep = scores > t`: a boolean mask as the index."""
    if len(subscript.slice) != 1 or type(subscript.slice[0].slice) is not cst.Index:
        return False
    index = subscript.slice[0].slice.value
    return any(type(v.expr) is cst.Comparison for v in ctx.resolver.values(index, at))


def _attribute_name(ctx: FileContext, name: cst.Name) -> bool:
    parent = ctx.parent(name)
    return type(parent) is cst.Attribute and parent.attr is name


def _model_selects(ctx: FileContext, call: cst.Call, at: cst.CSTNode, depth: int) -> bool:
    """`call` runs a model of a class of this file (through its DDP wrapper) whose
    `forward` returns a collection the data sizes."""
    layers = ModelLayers(ctx)
    wraps = facts_of(ctx).ddp_wraps
    for value in layers.constructions(call.func, at):
        made = value.expr
        if type(made) is cst.Call and any(made is wrap for wrap in wraps):
            inner = argument(made, 0, "module")
            found = list(layers.constructions(inner, made)) if inner is not None else []
        else:
            found = [value]
        for construction in found:
            built = construction.expr
            if type(built) is not cst.Call or type(built.func) is not cst.Name:
                continue
            for cls in ctx.model.classes.get(built.func.value, []):
                for forward in methods_named(cls, "forward"):
                    if _returns_selected(ctx, forward, depth):
                        return True
    return False


def _returns_selected(ctx: FileContext, forward: cst.FunctionDef, depth: int) -> bool:
    return any(
        node.value is not None and _selects(ctx, node.value, node, depth)
        for node in ctx.walk(forward)
        if type(node) is cst.Return
    )
