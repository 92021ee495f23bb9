"""DDP010: a collective or barrier reached under a rank condition."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ddplint.analysis.collectives import SYNC_COLLECTIVES, collective_functions
from ddplint.analysis.rank_guards import ends_in_exit, rank_guard
from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.facts import keyword, last_name
from ddplint.names import dotted
from ddplint.rule import Finding, Rule, register

_GROUP_KEYWORDS = ("group", "process_group", "pg")


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
            if (
                isinstance(guard, cst.If)
                and ends_in_exit(guard.body)
                and not ctx.is_inside(call, guard)
            ):
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
