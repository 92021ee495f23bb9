"""What the ranks a rank-gated exit turns away go on to do: the collectives they issue
after the exit, which the ranks that left never match. A `break` leaves its loop: the
others run its next pass. A `return` leaves its function: the others run the rest of it,
and the next passes of the loops around the exit."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain import Gate, domain_of
from ddplint.domain.apis import DDP_CLASSES
from ddplint.domain.ddp_steps import ddp_backward, trains_ddp_model
from ddplint.domain.project_view import project_of
from ddplint.engine.flow import calls_exit


@dataclass(frozen=True)
class Work:
    """A call the other ranks reach after the exit, and what it issues (for messages)."""

    call: cst.Call
    issues: str
    next_pass: bool  # reached in the next pass of the loop left, not later in this one


# A `break`, a `return`, or a call ending the process with status 0 (`clean_exits`).
Exit = cst.Break | cst.Return | cst.Call


def left_region(ctx: FileContext, exit_node: Exit) -> cst.CSTNode | None:
    """The loop a `break` leaves, the function a `return` leaves (None at module level),
    the loop around a process exit (the other ranks go on with it; None outside a loop,
    where what follows in the function is DDP010's)."""
    if type(exit_node) is cst.Return:
        return ctx.enclosing_function(exit_node)
    return ctx.enclosing_loop(exit_node)


def clean_exits(ctx: FileContext) -> list[cst.Call]:
    """Calls that end the process with status 0 (`sys.exit()`, `sys.exit(0)`, `exit()`,
    `os._exit(0)`) as a statement: torchrun tears the job down only when a rank exits
    with an error, so the other ranks go on alone."""
    found = []
    for node in ctx.nodes_of(cst.Expr):
        call = node.value  # type: ignore[attr-defined]
        if type(call) is cst.Call and calls_exit(call, ctx.flow.qualname):
            status = call.args[0].value if call.args else None
            if status is None or _zero(status):
                found.append(call)
    return found


def leavers_end_job(ctx: FileContext, exit_node: Exit, gate: Gate, region: cst.CSTNode) -> bool:
    """After a `break`, the ranks that left end their own process with a failure before
    any collective (`os.kill(os.getpid(), signal.SIGKILL)`, `sys.exit(1)`), on their side
    of the gate: the launcher (`mp.spawn`, torchrun) then tears down the ranks waiting
    for them, so nothing hangs and no collective pairs with another."""
    function = ctx.enclosing_function(exit_node)
    if type(exit_node) is not cst.Break or function is None:
        return False
    after = ctx.subtree_end[region]
    for call in ctx.calls_within(function.body):
        if ctx.order[call] < after or ctx.enclosing_function(call) is not function:
            continue
        on_leavers = all(g.side == gate.side for g in rank_gates(ctx, call))
        if on_leavers and _fails_own_process(ctx, call):
            return True
        if on_leavers and _issues(ctx, call, explicit=True) is not None:
            return False
    return False


def _fails_own_process(ctx: FileContext, call: cst.Call) -> bool:
    """`call` ends this process with a failure: kills its own process
    (`os.kill(os.getpid(), sig)`), aborts, or exits with a status other than 0."""
    name = ctx.call_name(call) or ""
    if name == "os.kill" and call.args:
        target = call.args[0].value
        return type(target) is cst.Call and ctx.call_name(target) == "os.getpid"
    if name == "os.abort":
        return True
    if not calls_exit(call, ctx.flow.qualname) or not call.args:
        return False
    status = call.args[0].value
    return isinstance(status, cst.Integer | cst.SimpleString) and not _zero(status)


def _zero(status: cst.BaseExpression) -> bool:
    if type(status) is cst.Integer:
        return status.value == "0"
    return type(status) is cst.Name and status.value in ("None", "False")


def others_work(ctx: FileContext, exit_node: Exit, gate: Gate, region: cst.CSTNode) -> Work | None:
    """The first call issuing a collective that the ranks the gate turns away reach after
    `exit_node` (which leaves `region`), under no rank gate but this one: for a `break` or
    a process exit, later in the pass it leaves, else in the loop's next pass. After a
    `return`, a collective written after the gate in the same function is DDP010's (it
    reports what is reached after an early exit on a rank test): only those of a loop's
    next pass count here."""
    gates = domain_of(ctx).gates
    candidates: list[tuple[cst.Call, bool]] = []  # (call, next pass of a loop), in time order
    after = ctx.subtree_end[gate.node]
    if isinstance(region, cst.For | cst.While):
        # the rest of this pass after the gate, then the next pass from its top
        body = ctx.calls_within(region.body)
        candidates = [(c, False) for c in body if ctx.order[c] >= after]
        candidates += [(c, True) for c in body]
    else:
        candidates = [(c, False) for c in ctx.calls_within(region) if ctx.order[c] >= after]
        for loop in _loops_around(ctx, exit_node, region):
            candidates.extend((c, True) for c in ctx.calls_within(loop.body))
        candidates.sort(key=lambda c: ctx.order[c[0]])
    seen: set[int] = set()
    for call, next_pass in candidates:
        if id(call) in seen or ctx.is_inside(call, gate.node):
            continue
        seen.add(id(call))
        if any(g.node is not gate.node for g in rank_gates(ctx, call)) or gates.single_process(
            call
        ):
            continue
        issues = _issues(ctx, call, explicit=next_pass or type(exit_node) is not cst.Return)
        if issues is not None:
            return Work(call, issues, next_pass)
    return None


def rank_gates(ctx: FileContext, node: cst.CSTNode) -> list[Gate]:
    """The rank gates of `node` that keep it from some ranks whatever the other terms of
    their tests hold: not an earlier exit on `rank == 0 and args.test_only`, past which
    every rank runs where the flag is off."""
    gates = domain_of(ctx).gates
    return [g for g in gates.gates(node) if gates.keeps_out(g)]


def _loops_around(
    ctx: FileContext, node: cst.CSTNode, function: cst.CSTNode
) -> list[cst.For | cst.While]:
    found: list[cst.For | cst.While] = []
    for ancestor in ctx.ancestors(node):
        if ancestor is function:
            break
        if isinstance(ancestor, cst.For | cst.While):
            found.append(ancestor)
    return found


def _issues(ctx: FileContext, call: cst.Call, explicit: bool) -> str | None:
    """What `call` issues on every rank that reaches it, worded for a message; None when
    it is not proven to issue a collective. Explicit collectives (and helpers that always
    issue one) count only when `explicit`."""
    if ctx.call_name(call) in DDP_CLASSES:
        return "its constructor broadcasts rank 0's parameters and buffers to every rank"
    if _joins_process_group(ctx, call):
        return "it joins the process group: `init_process_group` returns once every rank has"
    if ddp_backward(ctx, call):
        return "DDP's gradient all-reduce runs inside it"
    if trains_ddp_model(ctx, call):
        return "it runs `backward()` through the DDP model: DDP's gradient all-reduce"
    collectives = domain_of(ctx).collectives
    if not explicit or not collectives.surely_issues(call):
        return None
    if collectives.is_collective(call):
        return None if collectives.on_subgroup(call) else "a collective"
    inner = collectives.through(call)
    if inner is None:
        return "it issues a collective"
    return f"it issues `{ctx.code(inner.func)}()`"


_INIT = "torch.distributed.init_process_group"


def _joins_process_group(ctx: FileContext, call: cst.Call) -> bool:
    """`call` is `init_process_group`, or a function of this file or a helper of the
    project that initialises the process group (`init_distributed_device(args)`): every
    rank must join it before it returns."""
    if ctx.call_name(call) == _INIT:
        return True
    for callee in ctx.resolver.callees(call):
        if any(ctx.call_name(c) == _INIT for c in ctx.calls_within(callee)):
            return True
    project = project_of(ctx)
    return project is not None and project.helper_starts_processes(ctx, call)
