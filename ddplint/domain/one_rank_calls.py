"""Calls that run on one rank only: under a rank guard whose other branch does not make
the same call, in a module-level function reading a global that is only called under a
rank guard, in a method whose every call in its class (`self.evaluate()`) runs under a
rank guard (`rank_only_method_call`), or with an argument passed under a rank guard (a few
calls up). A loop that deals its iterations out by rank (`if i % world_size != rank:
continue`) is not a rank guard here: every rank runs the body, each on its share."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain import Gate, domain_of
from ddplint.domain.ddp_facts import facts_of
from ddplint.domain.processes import runs_in_one_process
from ddplint.domain.runners import call_sites
from ddplint.engine import MAX_DEPTH
from ddplint.names import dotted


def one_rank_guard(ctx: FileContext, node: cst.CSTNode) -> cst.CSTNode | None:
    """What makes `node` run on some ranks only (`Gates.gate`), leaving out the
    tests that share a loop's iterations among the ranks and the gates every rank passes
    where a flag of their test is off (`Gates.keeps_out`); None where only one process
    runs it, the job not being distributed (`runs_in_one_process`)."""
    gates = domain_of(ctx).gates
    found = gates.gate(node)
    if found is None or runs_in_one_process(ctx, node):
        return None  # `if local_rank == -1:` inside `if local_rank in [-1, 0]:`
    if found.condition is None:
        return found.node
    kept = [g for g in gates.gates(node) if gates.keeps_out(g) and not _shares_loop(ctx, g, node)]
    if kept:
        return kept[0].node
    function = ctx.enclosing_function(node)
    return None if function is None else gates.main_only_decorator(function)


def _shares_loop(ctx: FileContext, gate: Gate, node: cst.CSTNode) -> bool:
    """The gate compares the rank with a value computed from the variable of a `for` loop
    around `node` (`i % world_size != rank`, `rank == i`): each rank passes it for some
    iterations, so every rank runs the guarded code."""
    test = gate.test
    while type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        test = test.expression
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return False
    ranks = domain_of(ctx).ranks
    sides = (test.left, test.comparisons[0].comparator)
    for loop in ctx.ancestors(gate.node):
        if isinstance(loop, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return False
        if type(loop) is not cst.For or not ctx.is_inside(node, loop.body):
            continue
        targets = {n.value for n in ctx.walk(loop.target) if type(n) is cst.Name}
        for value, other in (sides, sides[::-1]):
            if ranks.is_rank_value(value, gate.node) and targets & {
                n.value for n in ctx.walk(other) if type(n) is cst.Name
            }:
                return True
    return False


def other_branch_calls(ctx: FileContext, guard: cst.CSTNode, call: cst.Call) -> bool:
    """The other branch of the rank `if` holding `call` calls the same callee."""
    if type(guard) is not cst.If:
        return False
    if ctx.is_inside(call, guard.body):
        other: cst.CSTNode | None = guard.orelse
    else:
        other = guard.body
    name = dotted(call.func)
    if other is None or name is None:
        return False
    return any(type(node) is cst.Call and dotted(node.func) == name for node in ctx.walk(other))


def global_model_site(ctx: FileContext, name: cst.Name, at: cst.CSTNode) -> cst.Call | None:
    """`def estimate_loss(): ... model(x)` reading the module-level DDP `model`, with
    every call of the function under a rank condition (nanoGPT-style scripts)."""
    facts = facts_of(ctx)
    func = ctx.scope(at)
    if type(func) is not cst.FunctionDef or ctx.scope(func) is not ctx.module:
        return None
    binding = facts.reaching_binding(name.value, at)
    if binding is None or binding.kind != "assign" or binding.scope is not ctx.module:
        return None
    if not facts.is_ddp_model(name, at):
        return None
    sites = call_sites(ctx, func)  # a module-level function: the resolver's links only
    if not sites:
        return None
    for site in sites:
        guard = one_rank_guard(ctx, site)
        if guard is None or other_branch_calls(ctx, guard, site):
            return None
    return sites[0]


@dataclass(frozen=True)
class GuardedSite:
    """`calls`, innermost first, through which a call site only reached under a rank
    condition (the last) passes the DDP model `model` (the argument it hands)."""

    calls: list[cst.Call]
    model: cst.BaseExpression


def guarded_site(
    ctx: FileContext, name: cst.Name, at: cst.CSTNode, depth: int = MAX_DEPTH
) -> GuardedSite | None:
    """The calls through which a call site only reached under a rank condition passes a
    DDP model for the parameter `name` of the function holding `at` (`test(loader,
    model)` under `if rank == 0:`, then `predict(model, x)` inside `test`)."""
    if depth == 0:
        return None
    facts = facts_of(ctx)
    binding = facts.reaching_binding(name.value, at)
    if binding is None or binding.kind != "param":
        return None
    for arg in ctx.resolver.arguments_for(binding):
        site = ctx.parent(ctx.parent(arg) or arg)
        if type(site) is not cst.Call:
            continue
        site_guard = one_rank_guard(ctx, site)
        if site_guard is not None:
            if other_branch_calls(ctx, site_guard, site):
                continue
            if facts.is_ddp_model(arg, site) and not facts.is_unwrapped_ddp(arg, site):
                return GuardedSite([site], arg)
        elif type(arg) is cst.Name:
            inner = guarded_site(ctx, arg, site, depth - 1)
            if inner is not None:
                return GuardedSite([site, *inner.calls], inner.model)
    return None


def _self_call_in(ctx: FileContext, call: cst.Call, owner: cst.ClassDef) -> bool:
    """`self.<method>(...)` inside the class `owner`."""
    func = call.func
    return (
        type(func) is cst.Attribute
        and type(func.value) is cst.Name
        and func.value.value == "self"
        and ctx.is_inside(call, owner)
    )


def _made_by(ctx: FileContext, call: cst.Call, owner: cst.ClassDef) -> bool:
    """The object whose method `call` calls (`trainer` in `trainer.validate()`) was made
    by the class `owner` (`trainer = Trainer(cfg)`): not a model's `model.eval()`."""
    func = call.func
    if type(func) is not cst.Attribute:
        return False
    for value in ctx.resolver.values(func.value, call):
        made = value.expr
        if (
            type(made) is cst.Call
            and (dotted(made.func) or "").rpartition(".")[2] == owner.name.value
        ):
            return True
    return False


def method_site(
    ctx: FileContext, model: cst.Attribute, at: cst.CSTNode, depth: int = MAX_DEPTH
) -> cst.Call | None:
    """A trainer's method reading the instance's DDP model (`self.model(x)` in `def
    eval(self)`) whose every call in its class (`self.eval()`) runs under a rank
    condition, here or in a method called so in turn (a few calls up): the call site."""
    if not (type(model.value) is cst.Name and model.value.value == "self"):
        return None
    if not facts_of(ctx).is_ddp_model(model, at):
        return None
    return rank_only_method_call(ctx, ctx.enclosing_function(at), depth)


def rank_only_method_call(
    ctx: FileContext, method: cst.FunctionDef | None, depth: int = MAX_DEPTH
) -> cst.Call | None:
    """A call of the method `method` (`self.evaluate()`) where every call of it in its
    class runs under a rank condition, here or in a method called so in turn (a few calls
    up), and no object the class made calls it elsewhere: the first call; else None."""
    if depth == 0 or method is None:
        return None
    owner = ctx.model.enclosing_class(method)
    if owner is None:
        return None
    calls = [
        call
        for call in ctx.model.calls_by_name.get(method.name.value, ())
        if type(call.func) is cst.Attribute
    ]
    sites = [call for call in calls if _self_call_in(ctx, call, owner)]
    if not sites:
        return None  # called from outside the class: its callers are out of sight
    inside = {id(call) for call in sites}
    if any(
        one_rank_guard(ctx, call) is None and _made_by(ctx, call, owner)
        for call in calls
        if id(call) not in inside
    ):
        return None  # `trainer.validate()` on every rank as well
    for site in sites:
        guard = one_rank_guard(ctx, site)
        if guard is not None and other_branch_calls(ctx, guard, site):
            return None
        if (
            guard is None
            and rank_only_method_call(ctx, ctx.enclosing_function(site), depth - 1) is None
        ):
            return None
    return sites[0]
