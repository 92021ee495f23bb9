"""Optimizers built from a module's parameters before the module is wrapped.

For a wrap `DDP(model.cuda(rank))` (or a project helper that wraps), the wrapped module is a
dotted name (`model`, `self.net`) seen through calls that return the module itself. An
earlier call of the wrap's function builds an optimizer from it when it constructs an
optimizer class whose `params` mention the module (directly or through a name bound to such
a value), or passes the module to a helper that builds one (a function of this file that
constructs an optimizer class, else a name that says so: `build_optimizer(model)`), or binds
the module together with an optimizer a helper of this file returns (`model, opt =
build(cfg)`). A module bound to another object between the optimizer and the wrap is a
different module; a `DataParallel` fallback of the same module is not. For `self.model`
wrapped in a method other than `__init__`, the optimizers `__init__` built count as earlier.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain import domain_of
from ddplint.domain.apis import DATA_PARALLEL_CLASSES, OPTIMIZER_HELPER, SAME_MODULE_METHODS
from ddplint.domain.ddp_facts import argument, last_name
from ddplint.names import dotted


def wrapped_module(expr: cst.BaseExpression | None) -> str | None:
    """`model` for `model`, `model.cuda(rank)`, `model.to(device)`."""
    while (
        type(expr) is cst.Call
        and type(expr.func) is cst.Attribute
        and expr.func.attr.value in SAME_MODULE_METHODS
    ):
        expr = expr.func.value
    return dotted(expr) if expr is not None else None


def optimizers_before_wrap(ctx: FileContext, wrap: cst.Call) -> Iterator[tuple[cst.Call, str]]:
    """The calls building an optimizer from the module `wrap` wraps, before the wrap, with
    the module's name."""
    module = wrapped_module(argument(wrap, 0, "module"))
    if module is None:
        return
    scope = ctx.scope(wrap)
    for call in ctx.calls_within(scope):
        if not ctx.before(call, wrap):
            continue
        if _builds_optimizer(ctx, call, module):
            if not _rebound_between(ctx, module, call, wrap):
                yield call, module
        elif _returns_optimizer_and(ctx, call, module):
            yield call, module
    for call in _constructor_calls(ctx, scope, module):
        if _builds_optimizer(ctx, call, module):
            yield call, module


def _mentions(ctx: FileContext, expr: cst.CSTNode, module: str) -> bool:
    prefix = module + "."
    for node in ctx.walk(expr):
        if isinstance(node, (cst.Name, cst.Attribute)):
            name = dotted(node)
            if name is not None and (name == module or name.startswith(prefix)):
                return True
    return False


def _params_mention(ctx: FileContext, call: cst.Call, module: str) -> bool:
    params = argument(call, 0, "params")
    if params is None:
        return False
    if _mentions(ctx, params, module):
        return True
    name = dotted(params)
    if name is not None:
        return any(_mentions(ctx, value, module) for value in ctx.values_of(name, call))
    return False


def _constructs_optimizer(ctx: FileContext, name: str) -> bool:
    """A function of this file called `name` constructs an optimizer class."""
    return any(
        domain_of(ctx).loops.is_optimizer_class(call)
        for function in ctx.functions.get(name, [])
        for call in ctx.calls_within(function)
    )


def _builds_optimizer(ctx: FileContext, call: cst.Call, module: str) -> bool:
    if domain_of(ctx).loops.is_optimizer_class(call):
        return _params_mention(ctx, call, module)
    func = call.func
    name = last_name(func)
    if name is None or not any(_mentions(ctx, arg.value, module) for arg in call.args):
        return False
    if type(func) is cst.Name and ctx.functions.get(name):
        return _constructs_optimizer(ctx, name)
    return bool(OPTIMIZER_HELPER.search(name))


def _returns_optimizer_and(ctx: FileContext, call: cst.Call, module: str) -> bool:
    """`model, opt = build(cfg)`: a helper of this file that builds an optimizer, whose
    result is what `module` is bound to."""
    if type(call.func) is not cst.Name or not _constructs_optimizer(ctx, call.func.value):
        return False
    statement = ctx.statement(call)
    if type(statement) is not cst.Assign or statement.value is not call:
        return False
    return any(
        isinstance(node, (cst.Name, cst.Attribute)) and dotted(node) == module
        for target in statement.targets
        for node in ctx.walk(target.target)
    )


def _rebound_between(ctx: FileContext, module: str, start: cst.CSTNode, end: cst.CSTNode) -> bool:
    """Whether `module` is bound to another object between `start` and `end`."""
    for binding in ctx.bindings_of(module, end):
        if binding.kind == "param":
            continue
        statement = binding.statement
        if not (ctx.before(start, statement) and ctx.before(statement, end)):
            continue
        if ctx.is_inside(end, statement) or wrapped_module(binding.value) == module:
            continue
        value = binding.value
        if (
            type(value) is cst.Call
            and ctx.call_name(value) in DATA_PARALLEL_CLASSES
            and wrapped_module(argument(value, 0, "module")) == module
        ):
            continue  # the single-process fallback: never runs where the DDP wrap does
        return True
    return False


def _constructor_calls(ctx: FileContext, scope: cst.CSTNode, module: str) -> list[cst.Call]:
    """For `self.model` wrapped in a method other than `__init__`: the calls of the class's
    `__init__`, which ran before."""
    if not module.startswith("self.") or type(scope) is not cst.FunctionDef:
        return []
    if scope.name.value == "__init__":
        return []
    owner = ctx.parent(ctx.parent(scope) or scope)
    if type(owner) is not cst.ClassDef or type(owner.body) is not cst.IndentedBlock:
        return []
    return [
        call
        for statement in owner.body.body
        if type(statement) is cst.FunctionDef and statement.name.value == "__init__"
        for call in ctx.calls_within(statement)
    ]
