"""Rank guards: the rank condition a node runs under, in its function or at every call
site of its function; and branches that run only when the job is not distributed.

Stricter than `DDPFacts.rank_guard` on scope (a lambda or class body ends the search) and
broader on early exits (`sys.exit()`, `os._exit()`, ... count like `return`).
"""

from __future__ import annotations

import libcst as cst

from ddplint.analysis.ranks import rank_only_decorator
from ddplint.context import FileContext
from ddplint.facts import last_name
from ddplint.names import dotted

_DISTRIBUTED_FLAG = ("distributed", "ddp", "is_initialized", "is_dist_avail_and_initialized")
_EXIT_CALLS = frozenset({"sys.exit", "os._exit", "exit", "quit", "os.abort"})


def ends_in_exit(block: cst.BaseSuite) -> bool:
    """The block ends in `return`, `raise` or an exit call (`sys.exit()`, `os._exit()`, ...)."""
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
            and ctx.facts.is_rank_test(ancestor.test)
        ):
            return ancestor
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
            if isinstance(ancestor, cst.FunctionDef) and rank_only_decorator(ancestor):
                return rank_only_decorator(ancestor)
            if isinstance(ancestor, cst.FunctionDef) and isinstance(
                ancestor.body, cst.IndentedBlock
            ):
                for statement in ancestor.body.body:
                    if statement is child:
                        break
                    if (
                        isinstance(statement, cst.If)
                        and ctx.facts.is_rank_test(statement.test)
                        and ends_in_exit(statement.body)
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


def guarded_everywhere(ctx: FileContext, node: cst.CSTNode, depth: int = 3) -> bool:
    """`node` runs under a rank condition: in its function, or because every call of its
    function in this file does (a few levels up)."""
    if rank_guard(ctx, node) is not None:
        return True
    func = ctx.enclosing_function(node)
    if func is None or depth == 0:
        return False
    sites = [s for s in call_sites(ctx, func) if not ctx.is_inside(s, func)]
    return bool(sites) and all(guarded_everywhere(ctx, s, depth - 1) for s in sites)


def single_process_branch(ctx: FileContext, node: cst.CSTNode) -> bool:
    """`node` runs only when the job is not distributed (`if not args.distributed:`,
    `if world_size == 1:`)."""
    child = node
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
            return False
        if isinstance(ancestor, cst.If) and child is not ancestor.test:
            test = ancestor.test
            in_body = ctx.is_inside(node, ancestor.body)
            negated = isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)
            inner = test.expression if negated else test  # type: ignore[attr-defined]
            text = (
                last_name(inner.func) if isinstance(inner, cst.Call) else last_name(inner)
            ) or ""
            if any(flag in text.lower() for flag in _DISTRIBUTED_FLAG) and negated == in_body:
                return True
            if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and in_body:
                target = test.comparisons[0]
                one = isinstance(target.comparator, cst.Integer) and target.comparator.value == "1"
                if (
                    one
                    and ctx.facts.is_world_size(test.left)
                    and isinstance(target.operator, (cst.Equal, cst.LessThanEqual))
                ):
                    return True
        child = ancestor
    return False
