"""Passes over a loader whose order cannot matter: each sums over the whole loader before
the one optimizer step that follows it (a full-batch gradient, an importance estimate), so
the same order every time changes nothing."""

from __future__ import annotations

import re

import libcst as cst

from ddplint.context import FileContext
from ddplint.names import dotted
from ddplint.rules.ddp002_missing_set_epoch.epoch_loops import EpochLoops

# Calls that hand a loader's batches through unchanged (`for i, b in enumerate(loader)`).
_PASS_THROUGH = frozenset({"enumerate", "zip", "tqdm", "iter"})
_DEPTH = 3  # calls of the file followed into, looking for a step
# Methods a pass calls on its tensors, meters and lists: none steps an optimizer.
_PLAIN_METHODS = frozenset(
    {
        "cuda", "to", "float", "half", "long", "int", "item", "detach", "cpu", "numpy",
        "size", "view", "reshape", "sum", "mean", "backward", "append", "extend", "update",
        "clone", "contiguous", "squeeze", "unsqueeze", "items", "keys", "values", "get",
        "numel", "format",
    }
)  # fmt: skip
# An optimizer's name: `optimizer`, `self.indicator_optimizer`, `opt`, `g_opt`.
_OPTIMIZER = re.compile(r"optim|^opt$|_opt$|^opt_", re.IGNORECASE)


def only_order_free_passes(ctx: FileContext, finder: EpochLoops, name: str) -> bool:
    """Every read of the loader `name` in the file (`finder`'s index of whole names) is a
    `for` loop over it (through `enumerate`, `tqdm`, ...) or its length, there is such a
    loop, and each is an order-free pass: no optimizer step in its body (nor in a
    function of the file the body calls, nor in a call into another module, whose steps
    are out of sight) and an optimizer step after it in its function. A parameter of that
    name anywhere in the file is a loader handed in, out of sight: no answer then."""
    if any(b.kind == "param" for b in ctx.model.bindings.get(name, ())):
        return False
    loops: list[cst.For] = []
    for read in finder.reads(name):
        if _length_of(ctx, read):
            continue
        loop = _iterating_loop(ctx, read)
        if loop is None:
            return False  # handed elsewhere, or iterated in a way not followed here
        loops.append(loop)
    return bool(loops) and all(_order_free(ctx, loop) for loop in loops)


def _length_of(ctx: FileContext, read: cst.BaseExpression) -> bool:
    call = _call_around(ctx, read)
    return call is not None and dotted(call.func) == "len"


def _call_around(ctx: FileContext, read: cst.BaseExpression) -> cst.Call | None:
    arg = ctx.parent(read)
    if type(arg) is not cst.Arg:
        return None
    call = ctx.parent(arg)
    return call if type(call) is cst.Call else None


def _iterating_loop(ctx: FileContext, read: cst.BaseExpression) -> cst.For | None:
    """The `for` loop whose iterable is `read`, perhaps wrapped in pass-through calls."""
    node: cst.CSTNode = read
    while True:
        parent = ctx.parent(node)
        if type(parent) is cst.For and parent.iter is node:
            return parent
        call = _call_around(ctx, node) if isinstance(node, cst.BaseExpression) else None
        if call is None or (dotted(call.func) or "").rpartition(".")[2] not in _PASS_THROUGH:
            return None
        node = call


def _order_free(ctx: FileContext, loop: cst.For) -> bool:
    if _steps(ctx, loop.body, _DEPTH):
        return False
    frame = ctx.scope(loop)
    return any(
        _OPTIMIZER.search(_stepped(call) or "") is not None
        and ctx.before(loop, call)
        and not ctx.is_inside(call, loop)
        for call in ctx.calls_within(frame)
    )


def _steps(ctx: FileContext, root: cst.CSTNode, depth: int) -> bool:
    """`root` may step an optimizer: a `.step()` call in it, or a call into a function of
    the file that may (`depth` calls deep), into another module, or a method of an
    object other than a tensor's, a meter's or a list's (each out of sight). A module's
    forward (`model(x)`, `self.model(x)`) steps nothing."""
    for call in ctx.nodes_within(root, cst.Call):
        assert type(call) is cst.Call
        if _is_step(call):
            return True
        callees = ctx.resolver.callees(call)
        if callees:
            if depth <= 0 or any(_steps(ctx, f.body, depth - 1) for f in callees):
                return True
        elif ctx.call_name(call) is not None:
            if _imported(ctx, call):
                return True
        elif not _forward_or_plain(call):
            return True
    return False


def _forward_or_plain(call: cst.Call) -> bool:
    """`model(x)`, `self.model(x)`, or a plain method (`x.cuda()`, `meter.update(v)`)."""
    func = call.func
    if type(func) is cst.Name:
        return True
    if type(func) is not cst.Attribute:
        return False
    if type(func.value) is cst.Name and func.value.value == "self":
        return True  # an attribute of the object that no method of the file names
    return func.attr.value in _PLAIN_METHODS


def _is_step(call: cst.Call) -> bool:
    return type(call.func) is cst.Attribute and call.func.attr.value == "step"


def _stepped(call: cst.Call) -> str | None:
    """`optimizer` of `optimizer.step()`."""
    if type(call.func) is not cst.Attribute or call.func.attr.value != "step":
        return None
    return dotted(call.func.value)


def _imported(ctx: FileContext, call: cst.Call) -> bool:
    """A call of a function imported from outside torch and the standard tools: a project
    helper, whose body is out of sight here."""
    name = ctx.call_name(call)
    if name is None:
        return False
    return not name.startswith(("torch.", "numpy.", "math.", "time.", "tqdm.", "builtins."))
