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
# Constructors that build a tensor in host memory unless given a `device` (or, for those
# taking data, handed a tensor): `.cuda()` of what they return is always a copy.
_SHAPED = frozenset({"torch.zeros", "torch.ones", "torch.full", "torch.empty", "torch.arange"})
_HOST_CONSTRUCTORS = (
    _SHAPED
    | {"torch.tensor"}
    | {name for name in _SEQUENCE_COPIES if not name.startswith("torch.cuda.")}
)
_PYTHON_NUMBERS = frozenset({"float", "int", "bool", "len"})
_DEFAULT_DEVICE_SETTERS = ("torch.set_default_device", "torch.set_default_tensor_type")


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
    perhaps moved or cast after (`.to(device)`, `.cuda()`, `.float()`), or `stop.cuda()`
    of a name that only ever holds a tensor built in host memory; None for anything else,
    a copy of a constant included (`torch.zeros(1).cuda()`, `torch.tensor([0.0])`)."""
    while (
        type(expr) is cst.Call
        and type(expr.func) is cst.Attribute
        and expr.func.attr.value in _KEEPING_FRESH
        and ctx.call_name(expr) is None
    ):
        base = expr.func.value
        if type(base) is cst.Name and expr.func.attr.value == "cuda":
            return moved_host_name(ctx, expr)
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


def moved_host_name(ctx: FileContext, expr: cst.BaseExpression) -> cst.Name | None:
    """`stop` of `stop.cuda()` (perhaps cast after: `.float()`), where `stop` only ever
    holds a tensor built in host memory and is read after the statement."""
    while type(expr) is cst.Call and type(expr.func) is cst.Attribute:
        base = expr.func.value
        if type(base) is cst.Name and expr.func.attr.value == "cuda":
            return base if _host_tensor(ctx, base) and _read_after(ctx, base) else None
        if expr.func.attr.value not in _KEEPING_FRESH or ctx.call_name(expr) is not None:
            return None
        expr = base
    return None


def _host_tensor(ctx: FileContext, name: cst.Name) -> bool:
    """Every assignment of `name` that reaches it builds a tensor in host memory
    (`stop = torch.tensor(0)`, `torch.zeros(1)`: no `device=`, data that is no tensor,
    whose device `torch.tensor` would keep) or changes it in place (`stop += 1`), there
    is at least one of the first kind, and the file moves no default device."""
    if any(True for _ in ctx.calls_to(*_DEFAULT_DEVICE_SETTERS)):
        return False
    reaching = ctx.resolver.reaching(name.value, name)
    built = [binding for binding in reaching if binding.kind != "augassign"]
    return bool(built) and all(  # `flag += 1` works in place: the tensor stays where it is
        binding.kind == "assign"
        and binding.index is None
        and type(binding.value) is cst.Call
        and _builds_on_host(ctx, binding.value)
        for binding in built
    )


def _builds_on_host(ctx: FileContext, call: cst.Call) -> bool:
    """`call` builds a tensor in host memory: a shape, or data that is a number."""
    called = ctx.call_name(call)
    if called not in _HOST_CONSTRUCTORS:
        return False
    if any(
        arg.star or (arg.keyword is not None and arg.keyword.value == "device") for arg in call.args
    ):
        return False
    if called in _SHAPED:
        return True
    data = call.args[0].value if call.args and call.args[0].keyword is None else None
    return data is not None and (
        _constant(data)
        or (
            type(data) is cst.Call
            and type(data.func) is cst.Name
            and data.func.value in _PYTHON_NUMBERS
        )
    )


def _read_after(ctx: FileContext, name: cst.Name) -> bool:
    """`name` is read again in its function after the statement that holds it: the value
    the collective should have changed is used (a warm-up on a throwaway tensor is not)."""
    statement = ctx.statement(name)
    frame = ctx.scope(name)
    for other in ctx.nodes_within(frame, cst.Name):
        assert type(other) is cst.Name
        if other.value != name.value or not ctx.before(statement, other):
            continue
        if ctx.is_inside(other, statement) or ctx.names_no_variable(other):
            continue
        if type(ctx.parent(other)) is cst.AssignTarget:
            continue
        return True
    return False
