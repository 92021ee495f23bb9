"""Reads of plain variable names, the other ways a name gets bound, and reads protected
by a `NameError` handler: what DDP042 needs beyond the model's assignments."""

from __future__ import annotations

from collections.abc import Container

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain import domain_of
from ddplint.domain.rank_values import differs_by_rank

# Concrete node classes, tested by `type(node) in ...` (a failing `isinstance` on LibCST's
# ABC-based classes costs ten times as much).
_STORE_PARENTS = frozenset(
    {
        cst.AssignTarget,
        cst.AnnAssign,
        cst.AugAssign,
        cst.For,
        cst.CompFor,
        cst.AsName,
        cst.Del,
        cst.NamedExpr,
        cst.Param,
        cst.NameItem,
        cst.ImportAlias,
        cst.FunctionDef,
        cst.ClassDef,
    }
)
_TARGETED_TYPES = (cst.AnnAssign, cst.AugAssign, cst.NamedExpr, cst.For, cst.CompFor)
_TARGETED = frozenset(_TARGETED_TYPES)
_UNPACKING = frozenset({cst.Tuple, cst.List, cst.Element, cst.StarredElement})
_CATCHING = frozenset({"NameError", "UnboundLocalError", "Exception", "BaseException"})
_INTROSPECTION = frozenset({"locals", "vars", "globals", "exec", "eval"})


def reads_of_names(ctx: FileContext, names: Container[str]) -> list[cst.Name]:
    """Every `Name` among `names` that reads a variable: not a target, a definition's
    name, an attribute after a dot or a keyword argument's keyword."""
    return [
        n
        for n in ctx.nodes_of(cst.Name)
        if type(n) is cst.Name and n.value in names and _reads(ctx, n)
    ]


def in_lambda(ctx: FileContext, read: cst.Name) -> bool:
    """`read` is in a lambda: its parameters and the time it runs are its own."""
    return any(type(a) is cst.Lambda for a in ctx.ancestors(read))


def _reads(ctx: FileContext, name: cst.Name) -> bool:
    parent = ctx.parent(name)
    if type(parent) is cst.Attribute and parent.attr is name:
        return False
    if type(parent) is cst.Arg and parent.keyword is name:
        return False
    child: cst.CSTNode = name
    while parent is not None and type(parent) in _UNPACKING:
        child, parent = parent, ctx.parent(parent)
    if type(parent) in _TARGETED and isinstance(parent, _TARGETED_TYPES):
        return parent.target is not child
    return type(parent) not in _STORE_PARENTS


def bound_otherwise(ctx: FileContext) -> set[tuple[cst.CSTNode, str]]:
    """(frame, name) pairs a frame binds or declares in a way the model's assignments do not
    record (`import`, `def`, `class`, `global`, `nonlocal`, `del`, `:=`); `(frame, "*")`
    for a frame that may bind any name (`from m import *`) or inspects its own variables
    (`locals()`, `exec`). A `global` name counts as bound at module level too: the function
    declaring it may assign it on every rank."""
    model = ctx.resolver.model
    found: set[tuple[cst.CSTNode, str]] = set()
    for node in ctx.nodes_of(
        cst.ImportAlias,
        cst.ImportStar,
        cst.FunctionDef,
        cst.ClassDef,
        cst.Global,
        cst.Nonlocal,
        cst.Del,
    ):
        frame = model.frame(node)
        if type(node) is cst.ImportStar:
            found.add((frame, "*"))
        elif type(node) is cst.ImportAlias:
            bound: cst.BaseExpression = node.asname.name if node.asname else node.name
            while type(bound) is cst.Attribute:
                bound = bound.value
            if type(bound) is cst.Name:
                found.add((frame, bound.value))
        elif isinstance(node, cst.FunctionDef | cst.ClassDef):
            found.add((frame, node.name.value))
        elif isinstance(node, cst.Global | cst.Nonlocal):
            for item in node.names:  # bound here, and in the frame it names
                found.update({(frame, item.name.value), (ctx.module, item.name.value)})
        else:
            found.update((frame, n.value) for n in ctx.walk(node) if type(n) is cst.Name)
    for named in ctx.nodes_of(cst.NamedExpr):
        if type(named) is cst.NamedExpr and type(named.target) is cst.Name:
            found.add((model.frame(named), named.target.value))
    for call in ctx.calls:
        if type(call.func) is cst.Name and call.func.value in _INTROSPECTION:
            found.add((model.frame(call), "*"))
    return found


def caught_name_error(ctx: FileContext, read: cst.Name) -> bool:
    """`read` sits in the body of a `try` with a handler that catches `NameError` (or a
    base class of it, or everything)."""
    child: cst.CSTNode = read
    for ancestor in ctx.ancestors(read):
        if isinstance(ancestor, cst.FunctionDef | cst.ClassDef | cst.Lambda):
            return False
        if type(ancestor) is cst.Try and child is ancestor.body:
            for handler in ancestor.handlers:
                if handler.type is None or _names(handler.type) & _CATCHING:
                    return True
        child = ancestor
    return False


def _names(expr: cst.BaseExpression) -> set[str]:
    if type(expr) is cst.Name:
        return {expr.value}
    if type(expr) is cst.Tuple:
        return {e.value.value for e in expr.elements if type(e.value) is cst.Name}
    return set()


def conditions_since(
    ctx: FileContext, read: cst.Name, bindings: list[cst.CSTNode]
) -> list[cst.BaseExpression]:
    """The tests of the conditions `read` runs under that the bindings do not also run
    under: whether the read runs may depend on them."""
    flow = ctx.flow
    shared = {id(c.gate) for b in bindings for c in flow.conditions(b)}
    return [c.test for c in flow.conditions(read) if id(c.gate) not in shared]


def rank_correlated(ctx: FileContext, test: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """`test` reads a value that may differ by rank: computed from the rank, or bound
    under a rank test (`run = None` on every rank, `run = init_logger()` on rank 0)."""
    domain = domain_of(ctx)
    gates, ranks, resolver = domain.gates, domain.ranks, ctx.resolver
    for node in ctx.walk(test):
        if not isinstance(node, cst.Name | cst.Attribute):
            continue
        if ranks.is_rank_value(node, at) or differs_by_rank(ranks, node, at):
            return True
        key = node.value if type(node) is cst.Name else None
        if key and any(gates.gate(b.statement) is not None for b in resolver.reaching(key, at)):
            return True
    return False
