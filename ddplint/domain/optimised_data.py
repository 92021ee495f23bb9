"""Backward passes that train no model: the function steps only optimizers built over
tensors it made trainable itself (`inputs = torch.randn(..., requires_grad=True)`, then
`optim.Adam([inputs])`): it optimises data (synthetic images recovered from a frozen
teacher, adversarial inputs, a latent code) against a model whose weights never change.
Each process may do that on its own shard with nothing to keep in step."""

from __future__ import annotations

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain import domain_of
from ddplint.engine.resolve import argument

# Torch functions that make a new tensor, trainable with `requires_grad=True`.
_FACTORIES = frozenset(
    f"torch.{name}"
    for name in (
        "randn",
        "rand",
        "randint",
        "zeros",
        "ones",
        "empty",
        "full",
        "tensor",
        "randn_like",
        "rand_like",
        "zeros_like",
        "ones_like",
        "empty_like",
        "full_like",
    )
)
# Tensor methods that give the same data on another device or type.
_MOVES = frozenset({"to", "cuda", "float", "half", "double", "detach", "clone", "contiguous"})
_DEPTH = 4


def optimises_data_only(ctx: FileContext, backward: cst.Call) -> bool:
    """The function of `backward` steps optimizers (`X.step()` with no argument), and every
    one of them is an optimizer class built in that function over a list of tensors the
    function made trainable itself; a step of anything else (an optimizer passed in, one
    over `model.parameters()`) answers False."""
    func = ctx.enclosing_function(backward)
    if func is None:
        return False
    loops = domain_of(ctx).loops
    steps = [
        call
        for call in ctx.calls_within(func)
        if type(call.func) is cst.Attribute
        and call.func.attr.value == "step"
        and not call.args
        and ctx.enclosing_function(call) is func
    ]
    optimizers = [
        value.expr
        for step in steps
        for value in ctx.resolver.values(step.func.value, step)  # type: ignore[attr-defined]
        if value.leaf and type(value.expr) is cst.Call and loops.is_optimizer_class(value.expr)
    ]
    return bool(optimizers) and all(_over_data(ctx, o) for o in optimizers)


def _over_data(ctx: FileContext, optimizer: cst.Call) -> bool:
    """`optimizer` is given a list (or tuple) literal of tensors made trainable in sight."""
    params = argument(optimizer, 0, "params")
    if not isinstance(params, (cst.List, cst.Tuple)) or not params.elements:
        return False
    return all(
        type(e) is cst.Element and _made_tensor(ctx, e.value, optimizer, _DEPTH, True)
        for e in params.elements
    )


def _made_tensor(
    ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode, depth: int, trainable: bool
) -> bool:
    """Every value of `expr` is a tensor a torch factory makes, also through names and
    moves (`.to(rank)`, `.cuda()`); `trainable`: made trainable too, by the factory's
    `requires_grad=True` or by `.requires_grad_()` on such a tensor."""
    if depth == 0:
        return False
    if type(expr) is cst.Name:
        values = [v for v in ctx.resolver.values(expr, at) if v.leaf]
        return bool(values) and all(
            v.expr is not expr and _made_tensor(ctx, v.expr, v.at, depth - 1, trainable)
            for v in values
        )
    if type(expr) is not cst.Call:
        return False
    if ctx.call_name(expr) in _FACTORIES:
        flag = argument(expr, None, "requires_grad")
        return not trainable or (type(flag) is cst.Name and flag.value == "True")
    func = expr.func
    if type(func) is not cst.Attribute:
        return False
    if func.attr.value == "requires_grad_" and trainable:
        return _made_tensor(ctx, func.value, at, depth - 1, False)
    return func.attr.value in _MOVES and _made_tensor(ctx, func.value, at, depth - 1, trainable)
