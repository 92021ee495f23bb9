"""DDP's gradient synchronisation turned off: code inside a `with` block whose context is
`model.no_sync()` on every path (or on some paths, when nothing inside the block tests
which), and functions that control synchronisation at all (`no_sync()`,
`require_backward_grad_sync`, accelerate's `accumulate()`, `join()`)."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.names import dotted

_SYNC_CONTROL = ("no_sync", "require_backward_grad_sync", "sync_gradients")
_SYNC_METHODS = frozenset({"no_sync", "accumulate", "join"})
_ALWAYS = "always"
_CONDITIONAL = "conditional"


def _is_no_sync_call(expr: cst.BaseExpression) -> bool:
    return (
        type(expr) is cst.Call
        and type(expr.func) is cst.Attribute
        and expr.func.attr.value == "no_sync"
    )


def _context_kind(ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode) -> str | None:
    """_ALWAYS when every value the context expression can hold is `model.no_sync()`,
    _CONDITIONAL when only some are (`nullcontext() if last else model.no_sync()`, a name
    bound differently in two branches), else None."""
    leaves = [v.expr for v in ctx.resolver.values(expr, at) if v.leaf]
    hits = sum(1 for leaf in leaves if _is_no_sync_call(leaf))
    if not hits:
        return None
    return _ALWAYS if hits == len(leaves) else _CONDITIONAL


def _no_sync_kind(ctx: FileContext, with_node: cst.With) -> str | None:
    kinds = [_context_kind(ctx, item.item, with_node) for item in with_node.items]
    if _ALWAYS in kinds:
        return _ALWAYS
    if _CONDITIONAL in kinds:
        return _CONDITIONAL
    return None


def under_if_within(ctx: FileContext, node: cst.CSTNode, root: cst.CSTNode) -> bool:
    """Whether `node` sits under an `if` that is itself inside `root`."""
    for ancestor in ctx.ancestors(node):
        if ancestor is root:
            return False
        if type(ancestor) is cst.If:
            return True
    return False


def _enclosing_withs(ctx: FileContext, node: cst.CSTNode) -> Iterator[cst.With]:
    """`with` statements whose body holds `node`, innermost first, in its function."""
    child = node
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return
        if type(ancestor) is cst.With and child is ancestor.body:
            yield ancestor
        child = ancestor


def unsynced_block(ctx: FileContext, node: cst.CSTNode) -> cst.With | None:
    """The innermost `with` around `node` (in its function) that runs it under
    `no_sync()`: on every path, or on some paths with no `if` between it and `node`."""
    for with_node in _enclosing_withs(ctx, node):
        kind = _no_sync_kind(ctx, with_node)
        if kind is None or (kind is _CONDITIONAL and under_if_within(ctx, node, with_node)):
            continue
        return with_node
    return None


def _is_sync_control(ctx: FileContext, node: cst.CSTNode) -> bool:
    """`node` names a sync control, or is `model.join()` / `accumulate()` entered by `with`."""
    if type(node) is cst.Attribute and node.attr.value in _SYNC_CONTROL:
        return True
    if type(node) is cst.Name and any(s in node.value for s in _SYNC_CONTROL):
        return True
    return (
        type(node) is cst.Call
        and type(node.func) is cst.Attribute
        and node.func.attr.value in _SYNC_METHODS
        # `with model.join():` / `with accelerator.accumulate(model):`, not
        # `os.path.join(...)` or `", ".join(...)`
        and (node.func.attr.value == "no_sync" or type(ctx.parent(node)) is cst.WithItem)
    )


def _sync_controls(ctx: FileContext) -> list[cst.CSTNode]:
    """The file's nodes that are sync controls (`_is_sync_control`), in source order."""
    kinds = (cst.Attribute, cst.Name, cst.Call)
    return [node for node in ctx.nodes_of(*kinds) if _is_sync_control(ctx, node)]


def _mentions_sync_control(ctx: FileContext, root: cst.CSTNode) -> bool:
    """`root` names a sync control, or enters `with model.join():` / `accumulate()`: one
    scan of the file, then a bisection per question."""
    return bool(ctx.model.within(root, ctx.memo(_sync_controls)))


def controls_sync(ctx: FileContext, scope: cst.CSTNode) -> bool:
    """The function (or a same-file function or method it calls) uses no_sync or the
    like."""
    if _mentions_sync_control(ctx, scope):
        return True
    for call in ctx.calls_within(scope):
        name = dotted(call.func)
        if name is not None and name.startswith("self.") and name.count(".") == 1:
            name = name[len("self.") :]  # `with self.sync_context(step):`, a method here
        if name is None or "." in name:
            continue
        for func in ctx.functions.get(name, ()):
            if _mentions_sync_control(ctx, func):
                return True
    return False
