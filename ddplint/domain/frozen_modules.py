"""Where a script stops gradients of a model's parameters: `p.requires_grad = False` in a
loop over `<module>.parameters()` (or `named_parameters()`), and
`<module>.requires_grad_(False)`; each with the module expression frozen. A model frozen
whole trains nothing: DDP has no gradient of it to all-reduce."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.ddp_facts import is_false
from ddplint.names import dotted

_PARAMETER_LISTS = frozenset({"parameters", "named_parameters"})


@dataclass(frozen=True)
class Freeze:
    """A statement that stops gradients (`node`) of the parameters of `module`; `partial`
    when it freezes part of a model: a submodule (`model.module.encoder`, `net.backbone`)
    or parameters a test in the loop picks (`if "embed" in name:`)."""

    node: cst.CSTNode
    module: cst.BaseExpression
    partial: bool


def freezes(ctx: FileContext) -> Iterator[Freeze]:
    for node in ctx.nodes_of(cst.Assign):
        assert type(node) is cst.Assign
        if not is_false(node.value):
            continue
        for target in node.targets:
            assigned = target.target
            if type(assigned) is cst.Attribute and assigned.attr.value == "requires_grad":
                module = _iterated_module(ctx, assigned.value, node)
                if module is not None:
                    picked = _picked_in_loop(ctx, node)
                    yield Freeze(node, module, picked or _submodule(module))
    for call in ctx.method_calls("requires_grad_"):
        func = call.func
        if (
            type(func) is cst.Attribute
            and call.args
            and is_false(call.args[0].value)
            and _iterated_module(ctx, func.value, call) is None
        ):
            yield Freeze(call, func.value, _submodule(func.value))


def _iterated_module(
    ctx: FileContext, param: cst.BaseExpression, at: cst.CSTNode
) -> cst.BaseExpression | None:
    """The module `m` when `param` is the variable of an enclosing `for p in
    m.parameters():` (or `for name, p in m.named_parameters():`)."""
    if type(param) is not cst.Name:
        return None
    loop = ctx.enclosing_loop(at)
    if type(loop) is not cst.For:
        return None
    names = [n.value for n in ctx.walk(loop.target) if type(n) is cst.Name]
    iterated = loop.iter
    if (
        param.value not in names[-1:]
        or type(iterated) is not cst.Call
        or type(iterated.func) is not cst.Attribute
        or iterated.func.attr.value not in _PARAMETER_LISTS
    ):
        return None
    return iterated.func.value


def _submodule(module: cst.BaseExpression) -> bool:
    """`model.module.encoder`, `net.backbone`, `model.layers[0]`: a part of the model, not
    the model (`model`, `model.module`, `self.model`)."""
    if type(module) is cst.Subscript:
        return True
    if type(module) is not cst.Attribute or module.attr.value == "module":
        return False
    inner = module.value  # `self.model`: the model an object holds
    return not (type(inner) is cst.Name and inner.value == "self")


def _picked_in_loop(ctx: FileContext, node: cst.CSTNode) -> bool:
    """An `if` between `node` and its loop: only some parameters are frozen."""
    for ancestor in ctx.ancestors(node):
        if type(ancestor) is cst.For:
            return False
        if type(ancestor) is cst.If:
            return True
    return False


def frozen_whole(ctx: FileContext, model: cst.BaseExpression) -> bool:
    """Every parameter of `model` (`encoder`, a DDP wrapper `encoder` or its `.module`) has
    its gradient stopped, in the file: the whole model is frozen, not a part of it."""
    name = dotted(model)
    if name is None:
        return False
    wanted = {name, name.removesuffix(".module"), f"{name}.module"}
    return any(not f.partial and dotted(f.module) in wanted for f in freezes(ctx))
