"""DDP010: a collective or barrier reached under a rank condition.

Also holds the rank-condition helpers the other sync/checkpoint rules (DDP011-DDP014) share.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.facts import _MAIN_PROCESS_NAME, COLLECTIVES, keyword, last_name
from ddplint.names import dotted
from ddplint.rule import Finding, Rule, register

# `destroy_process_group` tears down; it is not matched against other ranks' calls.
SYNC_COLLECTIVES = COLLECTIVES - {"torch.distributed.destroy_process_group"}
_GROUP_KEYWORDS = ("group", "process_group", "pg")
_EXIT_CALLS = frozenset({"sys.exit", "os._exit", "exit", "quit", "os.abort"})


def _is_minus_one(expr: cst.BaseExpression) -> bool:
    return (
        isinstance(expr, cst.UnaryOperation)
        and isinstance(expr.operator, cst.Minus)
        and isinstance(expr.expression, cst.Integer)
        and expr.expression.value == "1"
    )


def _is_zero(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Integer) and expr.value == "0"


def _is_mode_test(expr: cst.Comparison) -> bool:
    """`local_rank != -1`, `rank >= 0`, `local_rank == -1`: whether the run is distributed
    at all, the same answer on every rank."""
    if len(expr.comparisons) != 1:
        return False
    target = expr.comparisons[0]
    op = target.operator
    if _is_minus_one(target.comparator):
        return isinstance(op, (cst.Equal, cst.NotEqual, cst.GreaterThan, cst.LessThanEqual))
    if _is_zero(target.comparator):
        return isinstance(op, (cst.GreaterThanEqual, cst.LessThan))
    return False


def rank_dependent(ctx: FileContext, expr: cst.BaseExpression, depth: int = 3) -> bool:
    """A condition whose truth differs between ranks (`rank == 0`, `is_main_process()`,
    `not master`), but not a test of distributed mode (`local_rank != -1`)."""
    facts = ctx.facts
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
        return rank_dependent(ctx, expr.expression, depth)
    if isinstance(expr, cst.BooleanOperation):
        return rank_dependent(ctx, expr.left, depth) or rank_dependent(ctx, expr.right, depth)
    if isinstance(expr, cst.Comparison):
        if _is_mode_test(expr):
            return False
        operands = [expr.left, *(c.comparator for c in expr.comparisons)]
        return any(facts.is_rank_value(o) for o in operands)
    if isinstance(expr, cst.Call):
        func = last_name(expr.func)
        return func is not None and bool(_MAIN_PROCESS_NAME.match(func))
    name = last_name(expr)
    if name is None:
        return False
    if _MAIN_PROCESS_NAME.match(name):
        return True
    full = dotted(expr)
    if full is None or depth == 0:
        return False
    return any(rank_dependent(ctx, v, depth - 1) for v in ctx.values_of(full, expr))


def _exits(block: cst.BaseSuite) -> bool:
    """The block ends in `return`, `raise`, `continue`, `break` or an exit call."""
    if isinstance(block, cst.SimpleStatementSuite):
        statements = list(block.body)
    elif isinstance(block, cst.IndentedBlock) and block.body:
        last = block.body[-1]
        if not isinstance(last, cst.SimpleStatementLine):
            return False
        statements = list(last.body)
    else:
        return False
    if not statements:
        return False
    final = statements[-1]
    if isinstance(final, (cst.Return, cst.Raise)):
        return True
    return (
        isinstance(final, cst.Expr)
        and isinstance(final.value, cst.Call)
        and (dotted(final.value.func) or "") in _EXIT_CALLS
    )


def rank_guard(ctx: FileContext, node: cst.CSTNode) -> cst.CSTNode | None:
    """The rank condition under which `node` runs in its function: an enclosing `if` (or
    conditional expression) on a rank test, or an earlier `if not main: return`."""
    child = node
    for ancestor in ctx.ancestors(node):
        if (
            isinstance(ancestor, (cst.If, cst.IfExp))
            and child is not ancestor.test
            and rank_dependent(ctx, ancestor.test)
        ):
            return ancestor
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
            if isinstance(ancestor, cst.FunctionDef) and isinstance(
                ancestor.body, cst.IndentedBlock
            ):
                for statement in ancestor.body.body:
                    if statement is child:
                        break
                    if (
                        isinstance(statement, cst.If)
                        and rank_dependent(ctx, statement.test)
                        and _exits(statement.body)
                    ):
                        return statement
            return None
        if isinstance(ancestor, cst.ClassDef):
            return None
        child = ancestor
    return None


def call_sites(ctx: FileContext, func: cst.FunctionDef) -> list[cst.Call]:
    """Calls in this file of the function `func` (by name; `self.name(...)` too), leaving
    out calls that resolve to an imported name (`torch.save` for a helper named `save`)."""
    name = func.name.value
    sites = []
    for call in ctx.calls:
        if last_name(call.func) != name or ctx.call_name(call) is not None:
            continue
        if isinstance(call.func, cst.Attribute) and not isinstance(call.func.value, cst.Name):
            continue
        sites.append(call)
    return sites


def enclosing_function(ctx: FileContext, node: cst.CSTNode) -> cst.FunctionDef | None:
    scope = ctx.scope(node)
    return scope if isinstance(scope, cst.FunctionDef) else None


def guarded_everywhere(ctx: FileContext, node: cst.CSTNode, depth: int = 3) -> bool:
    """`node` runs under a rank condition: in its function, or because every call of its
    function in this file does (a few levels up)."""
    if rank_guard(ctx, node) is not None:
        return True
    func = enclosing_function(ctx, node)
    if func is None or depth == 0:
        return False
    sites = [s for s in call_sites(ctx, func) if not ctx.is_inside(s, func)]
    return bool(sites) and all(guarded_everywhere(ctx, s, depth - 1) for s in sites)


_COLLECTIVE_FUNCTIONS: weakref.WeakKeyDictionary[FileContext, dict[str, cst.Call]] = (
    weakref.WeakKeyDictionary()
)


def collective_functions(ctx: FileContext) -> dict[str, cst.Call]:
    """Functions of this file (by name) that issue a collective, directly or through another
    one; value: the collective (or helper) call. One pass over the calls, grouped by their
    function, then a fixpoint over the groups (cached per file)."""
    cached = _COLLECTIVE_FUNCTIONS.get(ctx)
    if cached is not None:
        return cached
    by_function: dict[str, list[cst.Call]] = {}
    for call in ctx.calls:
        scope = ctx.scope(call)
        if isinstance(scope, cst.FunctionDef) and not _in_lambda(ctx, call, scope):
            by_function.setdefault(scope.name.value, []).append(call)
    found: dict[str, cst.Call] = {}
    project = ctx.project
    changed = True
    while changed:
        changed = False
        for name, calls in by_function.items():
            if name in found:
                continue
            for call in calls:
                if (
                    ctx.call_name(call) in SYNC_COLLECTIVES
                    or (isinstance(call.func, cst.Name) and call.func.value in found)
                    # `evaluate()` reducing through `utils.reduce_across_processes()`
                    or (project is not None and project.helper_issues_collective(ctx, call))
                ):
                    found[name] = call
                    changed = True
                    break
    _COLLECTIVE_FUNCTIONS[ctx] = found
    return found


def _in_lambda(ctx: FileContext, node: cst.CSTNode, scope: cst.CSTNode) -> bool:
    for ancestor in ctx.ancestors(node):
        if ancestor is scope:
            return False
        if isinstance(ancestor, cst.Lambda):
            return True
    return False


def reaches_collective(ctx: FileContext, call: cst.Call) -> bool:
    """A collective call, or a call of a helper (this file or the project) issuing one."""
    if ctx.call_name(call) in SYNC_COLLECTIVES:
        return True
    if isinstance(call.func, cst.Name) and call.func.value in collective_functions(ctx):
        return ctx.call_name(call) is None
    project = ctx.project
    return project is not None and project.helper_issues_collective(ctx, call)


def _excludes_main(test: cst.BaseExpression) -> bool:
    """Rough polarity of a rank test: True for `rank != 0`, `local_rank not in (-1, 0)`,
    `not is_main_process()`, `rank > 0`; False for `rank == 0`, `is_main_process()`."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return not _excludes_main(test.expression)
    if isinstance(test, cst.BooleanOperation):
        return _excludes_main(test.left)
    if isinstance(test, cst.Comparison):
        return any(
            isinstance(c.operator, (cst.NotEqual, cst.NotIn, cst.GreaterThan, cst.GreaterThanEqual))
            for c in test.comparisons
        )
    return False


def _on_subgroup(call: cst.Call) -> bool:
    """The collective names a process group other than the default one."""
    for name in _GROUP_KEYWORDS:
        arg = keyword(call, name)
        if arg is not None:
            value = dotted(arg.value) or ""
            return value not in ("None", "dist.group.WORLD", "torch.distributed.group.WORLD")
    return False


@register
class CollectiveUnderRankCondition(Rule):
    code = "DDP010"
    name = "collective-under-rank-condition"
    severity = Severity.ERROR
    summary = "Collective or barrier reached only under a rank condition"
    explanation = """
## What it does
Flags a collective (`all_reduce`, `barrier`, `broadcast`, `all_gather`, `new_group`, ...)
that runs only on some ranks because it sits under a rank condition (`if rank == 0:`,
`if is_main_process():`, `if local_rank == 0:`, an earlier `if not main: return`), and the
call of a helper of this file or of the project that issues one (a save function ending
in `dist.barrier()`).

## Why is this bad?
Every rank of the group must issue the same collectives in the same order: they are matched
by sequence number, not by name or call site. A collective that only rank 0 reaches waits
forever for the others (a hang until the NCCL watchdog or gloo timeout), or pairs with the
next, unrelated collective the other ranks issue and corrupts that exchange.
`dist.new_group` too must be called by every rank, even those not in the new group.

Left alone: rank-0 work followed by a barrier every rank reaches, the rank-0-first pattern
(`if rank != 0: dist.barrier()` ... `if rank == 0: dist.barrier()`, each rank reaching one
barrier), both branches of an `if`/`else` issuing the collective, collectives on a
subgroup (`group=`), and point-to-point `send`/`recv`.

## Example
```python
if dist.get_rank() == 0:
    torch.save(model.module.state_dict(), path)
    dist.barrier()
```

## Use instead
```python
if dist.get_rank() == 0:
    torch.save(model.module.state_dict(), path)
dist.barrier()
```

## Fix safety
No automatic fix: where the collective belongs depends on what the other ranks must wait for.

## References
- https://pytorch.org/docs/stable/distributed.html#collective-functions
- https://pytorch.org/docs/stable/distributed.html#torch.distributed.new_group
"""
    flag = (
        """import torch
import torch.distributed as dist

def save(model, path):
    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), path)
        dist.barrier()
""",
        """import torch
import torch.distributed as dist

def save_checkpoint(state, path):
    torch.save(state, path)
    dist.barrier()

def train(model, rank, epochs):
    for epoch in range(epochs):
        if rank == 0:
            save_checkpoint({"model": model.module.state_dict()}, "ckpt.pt")
""",
        """import torch
from torch import distributed as D

def evaluate(correct, local_rank):
    if local_rank == 0:
        D.all_reduce(correct)
        print(correct.item())
""",
        """import torch.distributed as dist

def is_main_process():
    return dist.get_rank() == 0

def make_groups():
    if is_main_process():
        return dist.new_group(ranks=[0, 1])
    return None
""",
    )
    allow = (
        """import torch
import torch.distributed as dist

def save(model, path):
    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), path)
    dist.barrier()
""",
        """import torch.distributed as dist
from contextlib import contextmanager

@contextmanager
def rank_zero_first(local_rank):
    if local_rank != 0:
        dist.barrier()
    yield
    if local_rank == 0:
        dist.barrier()
""",
        """import torch
import torch.distributed as dist

def collect(t, rank, world_size):
    if rank == 0:
        bucket = [torch.zeros_like(t) for _ in range(world_size)]
        dist.gather(t, gather_list=bucket, dst=0)
        return bucket
    else:
        dist.gather(t, dst=0)
        return None
""",
        """import torch
import torch.distributed as dist

def exchange(t, rank):
    if rank == 0:
        dist.send(t, dst=1)
    elif rank == 1:
        dist.recv(t, src=0)
    if args.local_rank != -1:
        dist.barrier()
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        helpers = collective_functions(ctx)
        project = ctx.project
        candidates: list[tuple[cst.Call, str, str]] = []
        for call in ctx.calls:
            name = ctx.call_name(call)
            if name in SYNC_COLLECTIVES:
                if name != "torch.distributed.new_group" and _on_subgroup(call):
                    continue
                candidates.append((call, name, ""))
                continue
            func = last_name(call.func)
            if isinstance(call.func, cst.Name) and func in helpers and name is None:
                inner = ctx.code(helpers[func].func)
                candidates.append((call, f"helper:{func}", f" (it issues `{inner}()`)"))
            elif project is not None and project.helper_issues_collective(ctx, call):
                candidates.append((call, f"helper:{name}", " (it issues a collective)"))
        guarded = [(c, key, why, rank_guard(ctx, c)) for c, key, why in candidates]
        guarded = [g for g in guarded if g[3] is not None]
        for call, key, why, guard in guarded:
            if self._paired(ctx, call, key, guard, guarded, helpers):
                continue
            test = ctx.code(guard.test).strip()  # type: ignore[attr-defined]
            callee = ctx.code(call.func)
            if why:
                message = (
                    f"`{callee}()` is called only where `{test}` holds{why}: the other ranks "
                    "never issue that collective; collectives are matched by call order, so "
                    "this hangs or pairs with an unrelated collective later"
                )
            else:
                message = (
                    f"`{callee}()` is reached only where `{test}` holds: the other ranks never "
                    "issue it; collectives are matched by call order, so this hangs or pairs "
                    "with an unrelated collective later"
                )
            yield Finding(call, message)

    @staticmethod
    def _paired(ctx, call, key, guard, guarded, helpers) -> bool:
        """The ranks that skip this collective issue a matching one elsewhere: the other
        branch of the `if`, or a differently guarded call in the same function (the
        rank-0-first pattern)."""
        if isinstance(guard, (cst.If, cst.IfExp)):
            if isinstance(guard, cst.If) and _exits(guard.body) and not ctx.is_inside(call, guard):
                other: list[cst.CSTNode] = [guard.body]
            elif ctx.is_inside(call, guard.body):
                other = [guard.orelse] if guard.orelse is not None else []
            else:
                other = [guard.body]
            for branch in other:
                for node in ctx.walk(branch):
                    if isinstance(node, cst.Call) and (
                        ctx.call_name(node) in SYNC_COLLECTIVES
                        or (isinstance(node.func, cst.Name) and node.func.value in helpers)
                    ):
                        return True
        scope = ctx.scope(call)
        test = ctx.code(guard.test).strip()
        for other_call, other_key, _, other_guard in guarded:
            if (
                other_call is not call
                and other_key == key
                and ctx.scope(other_call) is scope
                and other_guard is not guard
                and ctx.code(other_guard.test).strip() != test
                and _excludes_main(guard.test) != _excludes_main(other_guard.test)
            ):
                return True
        return False
