"""DDP010: a collective or barrier reached under a rank condition."""

from __future__ import annotations

import re
from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.domain import Gate, Side, domain_of
from ddplint.domain.apis import MEMOIZERS
from ddplint.domain.ddp_facts import string_value
from ddplint.domain.rank_evidence import rank_evidence
from ddplint.domain.spawned_workers import spawns, worker
from ddplint.domain.switches import named_for_distribution
from ddplint.engine.flow import is_exit_call
from ddplint.rule import Finding, Rule, register
from ddplint.rules.ddp010_collective_under_rank_condition.step_tests import (
    StepTestCollective,
    step_test_collectives,
)

# An argument that is a process group: `group`, `tree_group`, `mesh.get_group("tree")`,
# `process_group`, `pg`.
_GROUP_ARGUMENT = re.compile(r"(?i)group\b|\bpg\b|get_group\(|new_group\(")


@register
class CollectiveUnderRankCondition(Rule):
    code = "DDP010"
    name = "collective-under-rank-condition"
    severity = Severity.ERROR
    # opt-in: first contact, fresh103 to fresh141 (bench/realworld/first_contact.py): 9 / 9 / 5
    default = False
    summary = "Collective or barrier reached only under a rank condition"
    explanation = """
## What it does
Flags a collective (`all_reduce`, `barrier`, `broadcast`, `all_gather`, `new_group`, ...)
that runs only on some ranks because it sits under a rank condition (`if rank == 0:`,
`if is_main_process():`, `if local_rank == 0:`, an earlier `if not main: return`), and the
call of a helper of this file or of the project that issues one (a save function ending
in `dist.barrier()`).

In a training step (the loop or function of a `backward()`), also flags such a call
reached only on one side of a test on what the rank computed in that step (its loss or
outputs, from its own batch): `if torch.isfinite(loss): ... else: self.reload()` where the
reload starts with a barrier, or `if loss.item() < best: save_best(model)` where the save
helper waits at one. Left alone when the decision was all-reduced first (`dist.all_reduce(
bad)` before `if bad.item():`), when the test's other branch issues a collective too, and
for tests on the batch's shape. Proven when the call issues a collective whenever it runs;
unproven (`--preview`) when only some of its paths do.

## Why is this bad?
Every rank of the group must issue the same collectives in the same order: they are matched
by sequence number, not by name or call site. A collective that only rank 0 reaches waits
forever for the others (a hang until the NCCL watchdog or gloo timeout), or pairs with the
next, unrelated collective the other ranks issue and corrupts that exchange.
`dist.new_group` too must be called by every rank, even those not in the new group.

Left alone: a collective after `dist.destroy_process_group()` earlier in its function
(a rank-0 test after leaving the group: the collective raises, and a helper asking
`dist.is_initialized()` issues none), a collective after an early exit that raises on the
ranks it turns away
(`if rank == owner and state is None: raise RuntimeError(...)`: those ranks fail, and
torchrun ends the job when a rank exits with an error: a crash, not a hang; a clean
`return` or `sys.exit(0)` there is reported), rank-0 work followed by a barrier every rank
reaches, the rank-0-first pattern
(`if rank != 0: dist.barrier()` ... `if rank == 0: dist.barrier()`, each rank reaching one
barrier; also split between the `__enter__` and `__exit__` of a context manager class),
its early-return form (`if rank != 0: dist.barrier(); return` with the same
barrier after the `if`, which only rank 0 reaches), both branches of an `if`/`else` issuing
the collective (also where one branch hands the function the other calls to a runner:
`wandb.agent(sweep, function=trainer.train)` on rank 0, `trainer.train()` on the others; a
function handed over is called), collectives on a
subgroup (`group=`), point-to-point `send`/`recv`, and helpers (of this file or of the
project) whose collective runs only under a condition of their own that is not a rank test
(`if sharded_eval: dist.broadcast(...)`): whether that flag is on where only some ranks
call them is not known statically. A helper handed a process group (`share(x, group=pg)`,
`binary_reduce(stats, mesh.get_group("tree"))`), and a test on a rank within a group
(`if dist.get_rank(reduction_group) == 0:`, a device mesh's `mesh["tp"].get_local_rank()`),
are reported as unproven (`--preview`): the
roots of one group may be exactly the members of the group the helper reduces over (a tree
reduction across groups), and the code does not show how the groups were built. So is a
collective after a test that deals a loop's items out to the ranks (`if idx % world_size
!= local_rank: continue`): every rank issues it for its own share, and the ranks pair up
when the shares fill the same number of passes, which the data decides. A test of the rank
against the variable of a loop over every rank (`for i in range(world_size): if i !=
rank:`) is a round, not a gate: every rank passes it as often as the others, each in
passes of its own; reported (unproven) only where the collective's arguments read the
loop variable (`broadcast(x, src=i)`): the ranks' calls then pair up out of step.
The message says when a helper is memoized (`@functools.cache`): a call with arguments it
has seen does not run its body, and so issues nothing.

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
        """
import numpy as np
import torch.distributed as dist

def gather_on_main(parts, world_size):
    np.save(f"part_{dist.get_rank()}.npy", parts)
    dist.barrier()
    if dist.get_rank() != 0:
        dist.barrier()
        return None
    merged = np.concatenate([np.load(f"part_{i}.npy") for i in range(world_size)])
    dist.barrier()
    return merged
""",
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
        collectives, gates = domain_of(ctx).collectives, domain_of(ctx).gates
        candidates: list[tuple[cst.Call, str, Gate]] = []
        groups: dict[tuple[cst.CSTNode, str], list[Gate]] = {}
        issued: dict[tuple[cst.CSTNode, str], list[cst.Call]] = {}
        for call in ctx.calls:
            name = ctx.call_name(call)
            if collectives.is_collective(call):
                if name != "torch.distributed.new_group" and collectives.on_subgroup(call):
                    continue
                key = name or ""
            elif collectives.surely_issues(call):
                key = f"helper:{ctx.code(call.func)}"
            else:
                continue
            gate = gates.gate(call)
            issued.setdefault((ctx.scope(call), key), []).append(call)
            if gate is not None:
                candidates.append((call, key, gate))
                groups.setdefault((_pairing_unit(ctx, call), key), []).append(gate)
        evidence = rank_evidence(ctx) if candidates else None
        for call, key, gate in candidates:
            if (
                self._other_ranks_issue(ctx, gate)
                or _others_hand_over(ctx, call, gate)
                or _others_raise(ctx, gate)
                or _group_left_before(ctx, call)
                or _workers_issue(ctx, call)
                or _paired(gate, groups[_pairing_unit(ctx, call), key])
                or _matched_after_leaving(ctx, call, gate, issued[ctx.scope(call), key])
            ):
                continue
            assert evidence is not None
            round_over_ranks = _rank_round(ctx, gate)
            if round_over_ranks is not None:
                if _reads(ctx, call, round_over_ranks):
                    message = _round_message(ctx, call, gate, round_over_ranks)
                    yield Finding(call, message, unproven=True)
                continue
            unproven = (
                not evidence.gate_traced(gate)  # a rank spelled in a name only
                or _group_membership_decides(ctx, call, gate)
                or _shards_items(ctx, gate)
                or _others_call_a_framework(ctx, gate)
            )
            yield Finding(call, _message(ctx, call, key, gate), unproven=unproven)
        for found in step_test_collectives(ctx):
            yield Finding(
                found.call, _step_message(ctx, found), unproven=not found.surely or found.shapes
            )

    @staticmethod
    def _other_ranks_issue(ctx: FileContext, gate: Gate) -> bool:
        """The ranks the gate turns away issue a collective on their own path: the other
        branch of the `if` (for an early exit, the branch that leaves)."""
        other = gate.turned_away
        if other is None:
            return False
        issues = domain_of(ctx).collectives.issues
        return any(type(n) is cst.Call and issues(n) for n in ctx.walk(other))


def _others_hand_over(ctx: FileContext, call: cst.Call, gate: Gate) -> bool:
    """The ranks the gate turns away hand the function this call runs to a runner that
    calls it (`wandb.agent(sweep, function=trainer.train)` on rank 0, `trainer.train()` on
    the others): a function handed over is called, so every rank reaches the same
    collectives."""
    other = gate.turned_away
    if other is None or not isinstance(call.func, (cst.Name, cst.Attribute)):
        return False
    called = ctx.code(call.func).strip()
    return any(type(n) is cst.Arg and ctx.code(n.value).strip() == called for n in ctx.walk(other))


def _workers_issue(ctx: FileContext, call: cst.Call) -> bool:
    """The call runs in the process that starts workers with `mp.spawn` (in the function
    that starts them), and the worker function makes the same call on every worker with no
    rank gate: the starting process takes part as one rank, so every rank issues the
    collective (detectron2-style `launch`, whose parent sets itself up as local rank 0)."""
    func = ctx.enclosing_function(call)
    if func is None:
        return False
    called = ctx.code(call.func).strip()
    gates = domain_of(ctx).gates
    for start in ctx.memo(spawns):
        spawned = worker(ctx, start)
        if spawned is None or ctx.enclosing_function(start) is not func:
            continue
        if any(
            ctx.code(other.func).strip() == called and gates.gate(other) is None
            for other in ctx.calls_within(spawned)
        ):
            return True
    return False


def _others_raise(ctx: FileContext, gate: Gate) -> bool:
    """The gate is an early exit whose leaving branch raises on the ranks it turns away
    (`if not ready: raise RuntimeError(...)`): they fail, and torchrun ends every rank when
    one exits with an error. A crash, not a wait in a collective. A plain exit
    (`sys.exit(0)`) is no such stop: a rank that ends cleanly leaves the others waiting."""
    condition = gate.condition
    if condition is None or not condition.early_exit or type(gate.node) is not cst.If:
        return False
    branch = gate.turned_away
    if type(branch) is cst.Else:
        branch = branch.body
    if not isinstance(branch, cst.IndentedBlock | cst.SimpleStatementSuite):
        return False
    flow = ctx.flow
    exits = any(is_exit_call(n, flow.qualname) for n in ctx.walk(branch))
    return not exits and flow.leaves(branch, stops_only=True)


_DESTROY = "torch.distributed.destroy_process_group"


def _group_left_before(ctx: FileContext, call: cst.Call) -> bool:
    """The process left the process group before `call` on every path to it:
    `dist.destroy_process_group()` earlier in the same function, under no condition that
    `call` does not run under itself but mode checks (`if args.distributed:`), and in no
    loop that does not hold `call`. A collective there raises (no default group), and a
    helper asking `dist.is_initialized()` issues none: nobody waits."""
    scope = ctx.scope(call)
    own = {(id(c.gate), c.holds) for c in ctx.flow.conditions(call)}
    for destroy in ctx.calls_to(_DESTROY):
        if ctx.scope(destroy) is not scope or not ctx.before(destroy, call):
            continue
        loop = ctx.enclosing_loop(destroy)
        if loop is not None and not ctx.is_inside(call, loop):
            continue
        if all(
            (id(c.gate), c.holds) in own or _mode_test(ctx, c.test)
            for c in ctx.flow.conditions(destroy)
        ):
            return True
    return False


def _mode_test(ctx: FileContext, test: cst.BaseExpression) -> bool:
    """`test` says whether the job is distributed (`Ranks.is_mode_check`), also as a config
    entry named for it (`config["ddp"]["distributed"]`): where it fails there is no group."""
    if domain_of(ctx).ranks.is_mode_check(test):
        return True
    key = test.slice[0].slice if type(test) is cst.Subscript and len(test.slice) == 1 else None
    text = string_value(key.value) if type(key) is cst.Index else None
    return text is not None and named_for_distribution(text)


def _message(ctx: FileContext, call: cst.Call, key: str, gate: Gate) -> str:
    """What is known: the gate, what a helper issues (unless a cache answers the call), and
    which ranks never issue it (those of the named subgroup the test turns away, if any)."""
    collectives = domain_of(ctx).collectives
    why, inner = "", None
    if key.startswith("helper:"):
        inner = collectives.through(call)
        issued = f"`{ctx.code(inner.func)}()`" if inner else "a collective"
        cached = ", unless its cache answers the call" if _memoized(ctx, call) else ""
        why = f" (it issues {issued}{cached})"
    group = collectives.subgroup(call) or (inner and collectives.subgroup(inner))
    others = "the other ranks never issue it"
    if group:
        others = f"any rank of `{ctx.code(group)}` the test turns away never issues it"
    where = gate.describe(ctx.code(gate.test).strip())
    return (
        f"`{ctx.code(call.func)}()` is reached {where}{why}: {others}; collectives are "
        "matched by call order, so this hangs or pairs with an unrelated collective later"
    )


def _step_message(ctx: FileContext, found: StepTestCollective) -> str:
    call = found.call
    collectives = domain_of(ctx).collectives
    why = ""
    if not collectives.is_collective(call):
        inner = collectives.through(call)
        issued = f"`{ctx.code(inner.func)}()`" if inner else "a collective"
        why = f" (it issues {issued}{'' if found.surely else ' on some paths'})"
    return (
        f"`{ctx.code(call.func)}()` is reached only where `{ctx.code(found.test).strip()}` "
        f"{'holds' if found.holds else 'fails'}, a test on what this rank computed in the "
        f"step{why}: each rank computes it from its own batch, so a rank that answers it "
        "differently never issues the collective; collectives are matched by call order, so "
        "this hangs or pairs with an unrelated collective later; all-reduce the decision "
        f"first{_shapes(found)}"
    )


def _shapes(found: StepTestCollective) -> str:
    return (
        " (unproven: it reads only the shape of what the step computed, which the model "
        "may fix alike on every rank)"
        if found.shapes
        else ""
    )


def _memoized(ctx: FileContext, call: cst.Call) -> bool:
    """`call` runs a function of this file under `@functools.cache` / `@lru_cache(...)`: a
    call with arguments seen before returns the cached result without running the body."""
    for callee in ctx.resolver.callees(call):
        for decorator in callee.decorators:
            expr = decorator.decorator
            if ctx.qualname(expr.func if type(expr) is cst.Call else expr) in MEMOIZERS:
                return True
    return False


def _matched_after_leaving(
    ctx: FileContext, call: cst.Call, gate: Gate, same_function: list[cst.Call]
) -> bool:
    """The branch holding the collective leaves the function (`if not is_main: barrier();
    return`) and the same collective follows the `if` in the function, where only the
    ranks the test turned away arrive: each rank issues it once, the pairs match."""
    condition, node = gate.condition, gate.node
    if condition is None or condition.early_exit or type(node) is not cst.If:
        return False
    branch = node.body if condition.holds else node.orelse
    if branch is None or not ctx.is_inside(call, branch) or not ctx.flow.leaves(branch):
        return False
    if any(isinstance(n, cst.Continue | cst.Break) for n in ctx.walk(branch)):
        return False  # it leaves a loop pass, not the function
    return any(
        other is not call and not ctx.is_inside(other, node) and ctx.before(node, other)
        for other in same_function
    )


# The methods of a context manager: a `with` block runs `__enter__`, the body, then
# `__exit__`, so a collective of one pairs with one of the other.
_CONTEXT_METHODS = frozenset({"__enter__", "__exit__", "__aenter__", "__aexit__"})


def _pairing_unit(ctx: FileContext, call: cst.Call) -> cst.CSTNode:
    """Where the rank-0-first pattern pairs a gated collective with another: its function,
    or for the entry and exit methods of a context manager class, the class (`__enter__`:
    `if rank > 0: barrier()`, `__exit__`: `if rank == 0: barrier()`)."""
    scope = ctx.scope(call)
    if type(scope) is cst.FunctionDef and scope.name.value in _CONTEXT_METHODS:
        owner = ctx.model.enclosing_class(scope)
        if owner is not None:
            return owner
    return scope


def _paired(gate: Gate, same_function: list[Gate]) -> bool:
    """The same collective under a gate on other ranks in the same function: the
    rank-0-first pattern (`if rank != 0: barrier()` ... `if rank == 0: barrier()`), or a
    branch on `rank == 1` next to one on `rank == 0`."""
    for other in same_function:
        unknown = Side.SOME in (gate.side, other.side)
        if (unknown and other.node is not gate.node) or (
            not unknown and other.side is not gate.side
        ):
            return True
    return False


def _others_call_a_framework(ctx: FileContext, gate: Gate) -> bool:
    """The branch the gate sends the other ranks down calls a distributed framework out of
    sight (`if dp_rank == 0: megatron.checkpointing.save_checkpoint(...); return`), which
    may issue the same collectives itself."""
    other = gate.turned_away if type(gate.node) is cst.If else None
    if other is None:
        return False
    collectives = domain_of(ctx).collectives
    return any(
        type(n) is cst.Call and collectives.may_issue_out_of_sight(n) for n in ctx.walk(other)
    )


def _shards_items(ctx: FileContext, gate: Gate) -> bool:
    """The gate deals a loop's items out to the ranks (`if idx % world_size != rank:
    continue`): every rank runs the collective for its own share of the items, so the ranks
    issue it alike when the shares give each the same number of passes, which the data
    decides."""
    condition = gate.condition
    if condition is None:
        return False
    ranks = domain_of(ctx).ranks
    for node in ctx.walk(condition.test):
        if not (type(node) is cst.Comparison and len(node.comparisons) == 1):
            continue
        for dealt in (node.left, node.comparisons[0].comparator):
            if (
                type(dealt) is cst.BinaryOperation
                and type(dealt.operator) is cst.Modulo
                and ranks.is_world_size(dealt.right, gate.node)
                and _loop_variable(ctx, dealt.left, gate.node)
            ):
                return True
    return False


def _rank_round(ctx: FileContext, gate: Gate) -> cst.For | None:
    """The loop over every rank whose variable the gate compares with the rank (`for i in
    range(world_size): if i != rank:`): every rank passes the test as often as the
    others (once for `==`, all passes but one for `!=`), each in passes of its own."""
    condition = gate.condition
    test = condition.test if condition is not None else None
    if not (type(test) is cst.Comparison and len(test.comparisons) == 1):
        return None
    if not isinstance(test.comparisons[0].operator, (cst.Equal, cst.NotEqual)):
        return None
    ranks = domain_of(ctx).ranks
    pair = (test.left, test.comparisons[0].comparator)
    for index, other in (pair, pair[::-1]):
        if not (type(index) is cst.Name and ranks.is_rank_value(other, gate.node)):
            continue
        for loop in ctx.model.ancestors(gate.node):
            if (
                type(loop) is cst.For
                and type(loop.target) is cst.Name
                and loop.target.value == index.value
                and _over_every_rank(ctx, loop.iter, gate.node)
            ):
                return loop
    return None


def _over_every_rank(ctx: FileContext, iterable: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """`range(world_size)` (or `range(0, world_size)`)."""
    func = iterable.func if type(iterable) is cst.Call else None
    if not (type(func) is cst.Name and func.value == "range"):
        return False
    assert type(iterable) is cst.Call
    args = [a.value for a in iterable.args]
    if len(args) == 2 and type(args[0]) is cst.Integer and args[0].value == "0":
        args = args[1:]
    return len(args) == 1 and domain_of(ctx).ranks.is_world_size(args[0], at)


def _reads(ctx: FileContext, call: cst.Call, loop: cst.For) -> bool:
    """An argument of `call` reads the loop's variable (`src=i`)."""
    assert type(loop.target) is cst.Name
    return any(loop.target.value in ctx.names_in(arg.value) for arg in call.args)


def _round_message(ctx: FileContext, call: cst.Call, gate: Gate, loop: cst.For) -> str:
    test = ctx.code(gate.test).strip()
    header = f"for {ctx.code(loop.target)} in {ctx.code(loop.iter)}"
    return (
        f"`{ctx.code(call.func)}()` runs in the passes of `{header}` where `{test}` holds: "
        "every rank issues it as often as the others, but each in passes of its own, and "
        f"its arguments read `{ctx.code(loop.target)}`: collectives are matched by call "
        "order, so the ranks' first calls pair up with different arguments (a mismatched "
        "root or payload, or a hang); issue it in every pass on every rank"
    )


def _loop_variable(ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """`expr` is a name a `for` loop around `at` binds (`for idx, example in ...`)."""
    if type(expr) is not cst.Name:
        return False
    for ancestor in ctx.model.ancestors(at):
        if type(ancestor) is cst.For and any(
            type(n) is cst.Name and n.value == expr.value for n in ctx.walk(ancestor.target)
        ):
            return True
    return False


def _group_membership_decides(ctx: FileContext, call: cst.Call, gate: Gate) -> bool:
    """The gate tests a rank within a process group (`dist.get_rank(group) == 0`), or the
    helper issuing the collective is handed a process group (`binary_reduce(stats,
    mesh.get_group("tree"))`): whether every member of the collective's group passes the
    test depends on how the groups were built (the roots of one group may be exactly the
    members of another), which the code does not show."""
    ranks = domain_of(ctx).ranks
    condition = gate.condition
    if condition is not None:
        for node in ctx.walk(condition.test):
            if isinstance(node, cst.BaseExpression) and ranks.is_group_rank(node, gate.node):
                return True
    return any(_GROUP_ARGUMENT.search(ctx.code(arg.value)) for arg in call.args)
