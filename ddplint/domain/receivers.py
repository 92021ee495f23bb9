"""What the object of a method call (`model.cuda()`) is, three-valued: an `nn.Module` or a
tensor (proven), an object of a class of this file that is none and has no such method
(disproven: the call raises AttributeError), or unknown; and whether it is an object at
all: a name whose every binding lies in the other branch of an `if` is never bound on the
path that reads it (the statement raises UnboundLocalError before it runs)."""

from __future__ import annotations

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.project_view import project_of
from ddplint.engine.resolve import methods_named
from ddplint.names import dotted

_MODULE_BASES = ("torch.nn.", "nn.")
_TENSOR_MAKERS = ("torch.",)
_DEPTH = 4  # base classes followed


def exclusive_branch(ctx: FileContext, a: cst.CSTNode, b: cst.CSTNode) -> cst.If | None:
    """The `if` of which `a` and `b` lie in different branches (never both run), if any."""
    for ancestor in ctx.ancestors(a):
        if type(ancestor) is not cst.If or ancestor.orelse is None:
            continue
        in_body = ctx.is_inside(a, ancestor.body)
        if in_body == ctx.is_inside(b, ancestor.body):
            continue
        if ctx.is_inside(b, ancestor) and not ctx.is_inside(b, ancestor.test):
            return ancestor
    return None


def exclusive_passes(ctx: FileContext, a: cst.CSTNode, b: cst.CSTNode) -> bool:
    """`a` and `b` never run in one call of their function: each lies under a test of the
    same code, on opposite sides (`if phase == "train":` twice, the bare module bound in
    the `else` of the first, `backward()` under the second), a test of local names only
    (no attribute, no call) that hold the same bindings at both."""
    if ctx.scope(a) is not ctx.scope(b):
        return False
    sides: dict[str, tuple[cst.BaseExpression, bool]] = {}
    for condition in ctx.flow.conditions(a):
        for term, value in condition.terms():
            sides[ctx.code(term).strip()] = (term, value)
    for condition in ctx.flow.conditions(b):
        for term, value in condition.terms():
            known = sides.get(ctx.code(term).strip())
            if known is not None and known[1] != value and _fixed_between(ctx, term, a, b):
                return True
    return False


def _fixed_between(
    ctx: FileContext, test: cst.BaseExpression, a: cst.CSTNode, b: cst.CSTNode
) -> bool:
    """`test` reads local names only, each holding the same bindings at `a` and at `b`."""
    names = [n for n in ctx.walk(test) if isinstance(n, (cst.Name, cst.Attribute, cst.Call))]
    if not names or any(type(n) is not cst.Name for n in names):
        return False
    for name in names:
        assert type(name) is cst.Name
        first = {id(x) for x in ctx.resolver.reaching(name.value, a)}
        if not first or first != {id(x) for x in ctx.resolver.reaching(name.value, b)}:
            return False
    return True


def never_bound(ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """`expr` (or the name its attribute chain starts from) is a local name of `at`'s
    function whose every binding lies in a branch of an `if` that `at` is in the other
    branch of, with no loop around that `if` in the function: reading it raises."""
    while type(expr) is cst.Attribute:
        expr = expr.value
    func = ctx.enclosing_function(at)
    if type(expr) is not cst.Name or func is None:
        return False
    bindings = ctx.resolver.reaching(expr.value, at)
    if not bindings:
        return False
    for binding in bindings:
        if binding.owner is not func or binding.kind == "param":
            return False
        branch = exclusive_branch(ctx, binding.statement, at)
        if branch is None or ctx.enclosing_loop(branch) is not None:
            return False
    return True


def is_module(ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode) -> bool | None:
    """True: every object `expr` may hold is made by `torch` (a tensor, an `nn` layer) or
    by a class of this file deriving from `nn.Module`. False: every one is made by a class
    of this file that is no `nn.Module` and defines no `cuda` / `to` (nor `__getattr__`).
    None: unknown (a parameter, a function's result, a class of another module)."""
    kinds = {_made_kind(ctx, value.expr) for value in ctx.resolver.values(expr, at) if value.leaf}
    return kinds.pop() if len(kinds) == 1 else None


def made_by_project_class(ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """Some object `expr` may hold is made by a class of another module of the project:
    what it is lies out of sight."""
    project = project_of(ctx)
    if project is None:
        return False
    for value in ctx.resolver.values(expr, at):
        call = value.expr
        if type(call) is cst.Call and (found := project.resolve(ctx, call)) is not None:
            summary, name = found
            if name in summary.classes:
                return True
    return False


def _made_kind(ctx: FileContext, expr: cst.BaseExpression) -> bool | None:
    if type(expr) is not cst.Call:
        return None
    name = ctx.call_name(expr) or ""
    if name.startswith(_TENSOR_MAKERS):
        return True
    local = dotted(expr.func)
    classes = ctx.model.classes.get(local or "", [])
    return _class_kind(ctx, classes[0], _DEPTH) if len(classes) == 1 else None


def _class_kind(ctx: FileContext, cls: cst.ClassDef, depth: int) -> bool | None:
    """True: `cls` derives from `nn.Module`; False: from nothing but `object` and plain
    classes of this file, none of them defining a device method; None: unknown."""
    if any(methods_named(cls, m) for m in ("cuda", "to", "__getattr__", "__getattribute__")):
        return None
    kinds: set[bool | None] = set()
    for base in cls.bases:
        if base.keyword is not None:
            continue  # `metaclass=...`
        qualified = ctx.qualname(base.value) or dotted(base.value) or ""
        if qualified == "object":
            continue
        if qualified.startswith(_MODULE_BASES):
            kinds.add(True)
            continue
        local = ctx.model.classes.get(dotted(base.value) or "", [])
        kinds.add(_class_kind(ctx, local[0], depth - 1) if len(local) == 1 and depth else None)
    if True in kinds:
        return True
    return False if kinds <= {False} else None
