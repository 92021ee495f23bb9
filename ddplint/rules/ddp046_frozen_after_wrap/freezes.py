"""Where a script stops gradients of a model's parameters: `p.requires_grad = False` in a
loop over `<module>.parameters()` (or `named_parameters()`), and
`<module>.requires_grad_(False)`; each with the module expression frozen."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.ddp_facts import is_false

_PARAMETER_LISTS = frozenset({"parameters", "named_parameters"})


@dataclass(frozen=True)
class Freeze:
    """A statement that stops gradients (`node`) of the parameters of `module`."""

    node: cst.CSTNode
    module: cst.BaseExpression


def freezes(ctx: FileContext) -> Iterator[Freeze]:
    for node in ctx.nodes_of(cst.Assign):
        assert isinstance(node, cst.Assign)
        if not is_false(node.value):
            continue
        for target in node.targets:
            assigned = target.target
            if isinstance(assigned, cst.Attribute) and assigned.attr.value == "requires_grad":
                module = _iterated_module(ctx, assigned.value, node)
                if module is not None:
                    yield Freeze(node, module)
    for call in ctx.method_calls("requires_grad_"):
        func = call.func
        if (
            isinstance(func, cst.Attribute)
            and call.args
            and is_false(call.args[0].value)
            and _iterated_module(ctx, func.value, call) is None
        ):
            yield Freeze(call, func.value)


def _iterated_module(
    ctx: FileContext, param: cst.BaseExpression, at: cst.CSTNode
) -> cst.BaseExpression | None:
    """The module `m` when `param` is the variable of an enclosing `for p in
    m.parameters():` (or `for name, p in m.named_parameters():`)."""
    if not isinstance(param, cst.Name):
        return None
    loop = ctx.enclosing_loop(at)
    if not isinstance(loop, cst.For):
        return None
    names = [n.value for n in ctx.walk(loop.target) if isinstance(n, cst.Name)]
    iterated = loop.iter
    if (
        param.value not in names[-1:]
        or not isinstance(iterated, cst.Call)
        or not isinstance(iterated.func, cst.Attribute)
        or iterated.func.attr.value not in _PARAMETER_LISTS
    ):
        return None
    return iterated.func.value
