"""The module inside a DDP wrapper: expressions that hold it (`ddp.module`, a piece of it
`ddp.module[0]`, `getattr(ddp, "module")`, `unwrap_model(ddp)`, names and parameters
bound to one), functions that call the wrapper itself besides (or hand it to a call
that may), and bare modules bound only on passes that run no backward."""

from __future__ import annotations

import builtins
import re

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain import domain_of
from ddplint.domain.ddp_facts import DDPFacts, argument, facts_of, last_name, string_value
from ddplint.domain.receivers import exclusive_passes
from ddplint.names import dotted

_UNWRAP_FUNCTION = re.compile(r"unwrap|de_?parallel|without_ddp|bare_model")
_BUILTINS = frozenset(dir(builtins))  # `isinstance(model, DDP)`, `hasattr(model, "module")`


def bare_module_sources(
    ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode
) -> tuple[cst.CSTNode, ...]:
    """Where `expr` may get the module inside a DDP wrapper at `at` (none: it holds no
    such module): `ddp.module`, `getattr(ddp, "module")`, `unwrap_model(ddp)`, or a name
    bound to one of them (the other branches hold a model never wrapped). A parameter
    must get one from every caller: a helper also given the wrapper may run the bare
    module on purpose. A finding rests on these: where none of them can run (`self.model.module
    if self.distributed else self.model` in a class that asserts `not self.distributed`),
    there is no bare module."""
    name = dotted(expr)
    reaching = ctx.resolver.reaching(name, at) if name is not None else []
    if any(b.kind == "param" for b in reaching):
        passed = [a for b in reaching for a in ctx.resolver.arguments_for(b)]
        per_argument = [
            [v.expr for v in ctx.resolver.values(a, a) if _unwraps_ddp(ctx, v.expr, v.at)]
            for a in passed
        ]
        if not passed or not all(per_argument):
            return ()
        return tuple(e for found in per_argument for e in found)
    found = tuple(
        v.expr
        for v in ctx.resolver.values(expr, at)
        if _unwraps_ddp(ctx, v.expr, v.at) and not _bound_later(ctx, v.at, at)
    )
    if found or type(expr) is not cst.Name:
        return found
    return _wrapped_under_another_name(ctx, expr, at)


def _wrapped_under_another_name(
    ctx: FileContext, name: cst.Name, at: cst.CSTNode
) -> tuple[cst.CSTNode, ...]:
    """The DDP constructions of `name`'s function, before `at`, that wrap the very object
    `name` holds there and bind the wrapper to another name (`ddp_model = DDP(model,
    ...)`, then `model(x)`): `name` is the module inside that wrapper."""
    scope = ctx.scope(at)
    here = _binding_statements(ctx, name.value, at)
    if not here:
        return ()
    found = []
    for wrap in ctx.memo(_wraps_by_scope).get(id(scope), ()):
        wrapped = argument(wrap, 0, "module")
        assign = ctx.parent(wrap)
        if (
            ctx.before(wrap, at)
            and type(wrapped) is cst.Name
            and wrapped.value == name.value
            and type(assign) is cst.Assign
            and all(
                type(t.target) is cst.Name and t.target.value != name.value for t in assign.targets
            )
            and _binding_statements(ctx, name.value, wrap) == here
        ):
            found.append(wrap)
    return tuple(found)


def _wraps_by_scope(ctx: FileContext) -> dict[int, list[cst.Call]]:
    """The file's DDP constructions by the identity of their function (or module)."""
    found: dict[int, list[cst.Call]] = {}
    for wrap in facts_of(ctx).ddp_wraps:
        found.setdefault(id(ctx.scope(wrap)), []).append(wrap)
    return found


def _binding_statements(ctx: FileContext, name: str, at: cst.CSTNode) -> set[int]:
    """The statements binding `name` that reach `at`, by identity."""
    return {id(b.statement) for b in ctx.resolver.reaching(name, at)}


def _bound_later(ctx: FileContext, bound: cst.CSTNode, at: cst.CSTNode) -> bool:
    """`bound` (a rebinding to the bare module: `model = model.module` after the epoch
    loop) comes after `at` in the same function, or after every call of the closure
    holding `at`, in no loop around them: the read at `at` does not see it."""
    func = ctx.enclosing_function(bound)
    if func is None:
        return False
    reads = [at]
    inner = ctx.enclosing_function(at)
    if inner is not func:  # `at` in a closure the function calls (`train_epoch()`)
        if inner is None or ctx.enclosing_function(inner) is not func:
            return False
        reads = [c for c in ctx.resolver.calls_of(inner) if ctx.enclosing_function(c) is func]
    return bool(reads) and all(_before_outside_loops(ctx, read, bound) for read in reads)


def _before_outside_loops(ctx: FileContext, read: cst.CSTNode, bound: cst.CSTNode) -> bool:
    if not ctx.before(read, bound):
        return False
    loop = ctx.enclosing_loop(read)
    while loop is not None:
        if ctx.is_inside(bound, loop):
            return False
        loop = ctx.enclosing_loop(loop)
    return True


def bare_apart_from_backward(ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """Every binding giving `expr` the bare module at `at` runs only on passes where no
    `backward()` of the function does (`model = ddp.module` in the validation branch of
    `if phase == "train": ... else: ...`, `loss.backward()` under `if phase == "train":`):
    the wrapper is what the training passes call."""
    bare = [v for v in ctx.resolver.values(expr, at) if _unwraps_ddp(ctx, v.expr, v.at)]
    scope = ctx.scope(at)
    backward = [s.call for s in domain_of(ctx).backward.sites if ctx.scope(s.call) is scope]
    return (
        bool(bare)
        and bool(backward)
        and all(exclusive_passes(ctx, v.at, call) for v in bare for call in backward)
    )


def scope_calls_wrapper(ctx: FileContext, call: cst.Call, target: cst.BaseExpression) -> bool:
    """The function holding `call` also calls the DDP wrapper whose module `target` holds
    (another call; any DDP model where the wrapper is not known by name): a GAN step that
    runs the discriminator's wrapper does not make the generator's bare forward right."""
    facts = facts_of(ctx)
    wrappers = _wrappers_of(ctx, target, call)
    scope = ctx.scope(call)
    for other in ctx.calls_within(scope) if scope is not ctx.module else ():
        func = other.func
        if (
            other is not call
            and ctx.qualname(func) is None
            and not (type(func) is cst.Name and func.value in ctx.functions)
            and _is_the_wrapper(facts, wrappers, func, other)
        ):
            return True
    return False


def scope_hands_wrapper_on(ctx: FileContext, call: cst.Call, target: cst.BaseExpression) -> bool:
    """The function holding `call` hands the DDP wrapper whose module `target` holds to
    another call that is no library's and whose result reaches a backward
    (`loss = train_fn(model, x, lc=model.module.lipschitz())`, `train_fn` picked from a
    module by name): the wrapper's forward may run there, in the same step, and a method
    of the module then only adds a term to its loss. Not a call that only builds the
    optimizer or saves the model, nor a builtin (`raw = model.module if isinstance(model,
    DDP) else model`)."""
    scope = ctx.scope(call)
    if scope is ctx.module:
        return False
    facts = facts_of(ctx)
    backward = domain_of(ctx).backward
    wrappers = _wrappers_of(ctx, target, call)
    for other in ctx.calls_within(scope):
        func = other.func
        if other is call or not isinstance(func, (cst.Name, cst.Attribute)):
            continue
        if ctx.qualname(func) is not None or not backward.reaches(other):
            continue
        if type(func) is cst.Name and func.value in _BUILTINS:
            continue
        if any(_is_the_wrapper(facts, wrappers, arg.value, other) for arg in other.args):
            return True
    return False


def _is_the_wrapper(
    facts: DDPFacts, wrappers: set[str], expr: cst.BaseExpression, at: cst.CSTNode
) -> bool:
    """`expr` names a DDP model at `at`: one of `wrappers` (any, where they have no name)."""
    return (
        isinstance(expr, (cst.Name, cst.Attribute))
        and (not wrappers or dotted(expr) in wrappers)
        and facts.is_ddp_model(expr, at)
    )


def _wrappers_of(ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode) -> set[str]:
    """The names of the wrappers whose module `expr` holds at `at` (`model` for
    `model.module`, `unwrap(model)`, `getattr(model, "module")`); empty when one of them
    has no name."""
    names: set[str] = set()
    for value in ctx.resolver.values(expr, at):
        if not _unwraps_ddp(ctx, value.expr, value.at):
            continue
        held = value.expr
        wrapper = held.value if type(held) is cst.Attribute else None
        if type(held) is cst.Call:
            wrapper = argument(held, 0, "model")
        name = dotted(wrapper) if wrapper is not None else None
        if name is None:
            return set()
        names.add(name)
    return names


def _unwraps_ddp(ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
    facts = facts_of(ctx)
    if type(expr) is cst.Subscript:
        expr = expr.value  # `ddp.module[0]`: a piece of the module inside the wrapper
        if type(expr) is not cst.Attribute:
            return False
    if type(expr) is cst.Attribute and expr.attr.value == "module":
        return facts.is_ddp_model(expr.value, at)
    if type(expr) is not cst.Call:
        return False
    func = last_name(expr.func) or ""
    first = argument(expr, 0, "model")
    if first is None:
        return False
    if func == "getattr":
        second = argument(expr, 1, "name")
        return (
            second is not None
            and string_value(second) == "module"
            and facts.is_ddp_model(first, at)
        )
    return bool(_UNWRAP_FUNCTION.search(func)) and facts.is_ddp_model(first, at)
