"""The destination of an in-place collective, and whether it is a fresh copy of a value."""

from __future__ import annotations

import libcst as cst

from ddplint.context import FileContext

# In-place collectives, by short name: the tensor they write into is their first argument.
_IN_PLACE = {f"torch.distributed.{name}": name for name in ("all_reduce", "reduce", "broadcast")}
# Methods that give back their tensor or a new one, never one sharing memory with anything
# else: applied to a fresh copy, the result is still reachable by nothing but the call.
_KEEPING_FRESH = frozenset(
    {
        "to",
        "cuda",
        "cpu",
        "float",
        "double",
        "half",
        "bfloat16",
        "long",
        "int",
        "bool",
        "contiguous",
        "detach",
        "view",
        "reshape",
        "flatten",
        "squeeze",
        "unsqueeze",
        "type",
    }
)
# Legacy constructors: they copy a list or tuple literal, but `torch.FloatTensor(t)` of a
# tensor may share its memory.
_SEQUENCE_COPIES = frozenset(
    f"{module}.{kind}Tensor"
    for module in ("torch", "torch.cuda")
    for kind in ("", "Float", "Double", "Half", "Long", "Int")
)
_LITERALS = (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString)


def destination(ctx: FileContext, call: cst.Call) -> tuple[str, cst.BaseExpression] | None:
    """(the collective's short name, the tensor it writes into) of an in-place collective."""
    name = _IN_PLACE.get(ctx.call_name(call) or "")
    if name is None:
        return None
    for position, arg in enumerate(call.args):
        if arg.star:
            return None
        if (arg.keyword is None and position == 0) or (
            arg.keyword is not None and arg.keyword.value == "tensor"
        ):
            return name, arg.value
    return None


def copied_from(ctx: FileContext, expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """The value `expr` is a fresh copy of, where it is one that carries a value:
    `torch.tensor(total_loss)`, `torch.FloatTensor([loss, n])`, `value.clone()`, each
    perhaps moved or cast after (`.to(device)`, `.cuda()`, `.float()`); None for anything
    else, a copy of a constant included (`torch.zeros(1).cuda()`, `torch.tensor([0.0])`)."""
    while (
        type(expr) is cst.Call
        and type(expr.func) is cst.Attribute
        and expr.func.attr.value in _KEEPING_FRESH
        and ctx.call_name(expr) is None
    ):
        base = expr.func.value
        if type(base) is not cst.Call:
            return None  # `x.to(device)` of a named tensor may be `x` itself
        expr = base
    if type(expr) is not cst.Call:
        return None
    positional = [a.value for a in expr.args if a.keyword is None and not a.star]
    called = ctx.call_name(expr)
    func = expr.func
    if type(func) is cst.Attribute and func.attr.value == "clone" and not expr.args:
        source = func.value
    elif positional and (
        called == "torch.tensor"
        or (called in _SEQUENCE_COPIES and isinstance(positional[0], (cst.List, cst.Tuple)))
    ):
        source = positional[0]
    else:
        return None
    return None if _constant(source) else source


def _constant(expr: cst.BaseExpression) -> bool:
    """A literal, or a list, tuple or sign of literals (`[0.0]`, `-1`, `(0, 0)`); a bare
    name counts only for `True`, `False` and `None`."""
    if type(expr) is cst.Name:
        return expr.value in ("True", "False", "None")
    if isinstance(expr, _LITERALS):
        return True
    if type(expr) is cst.UnaryOperation:
        return _constant(expr.expression)
    if isinstance(expr, (cst.List, cst.Tuple)):
        return all(type(e) is cst.Element and _constant(e.value) for e in expr.elements)
    return False
