"""Literal devices that are right for the process running them: under a rank check, where
only one process runs (`if args.distributed: ... else: "cuda:0"`, a single-process test),
in a function called only from such places (`evaluate()` under `if rank == 0:`), one entry
of a per-rank table, a single-process default that the code overrides per rank later in
its scope, or in a Ray actor given GPUs of its own."""

from __future__ import annotations

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain import domain_of
from ddplint.domain.device_literals import cuda_literal
from ddplint.domain.devices import device_arguments, device_string_index
from ddplint.domain.local_rank_names import LOCAL_RANK_NAME
from ddplint.domain.processes import runs_in_one_process
from ddplint.domain.rank_values import differs_by_rank
from ddplint.domain.ranks import Ranks
from ddplint.domain.ray_actors import on_own_gpus
from ddplint.domain.runners import every_rank, handed_on, holds_at_every_call
from ddplint.domain.switches import flag_reading
from ddplint.engine.flow import logical_terms
from ddplint.names import dotted

_FAKE_MODE = ".FakeTensorMode"


def right_for_its_process(ctx: FileContext, literal: cst.CSTNode) -> bool | None:
    """The literal device is right where it runs: one entry of a per-rank table, a
    single-process default overridden per rank later in its scope, in a Ray actor on GPUs
    of its own (`on_own_gpus`), or where no path runs it on every rank
    (`ddplint.domain.runners.every_rank`: under a rank check, where only one process runs,
    here or where its function is called, in this module or another); None when no path
    is proven to run it on every rank but some path is out of sight."""
    if (
        on_own_gpus(ctx, literal)
        or _default_overridden_per_rank(ctx, literal)
        or _in_per_rank_table(ctx, literal)
    ):
        return True
    where = every_rank(ctx, literal)
    return None if where is None else not where


def beside_per_rank_choice(ctx: FileContext, literal: cst.CSTNode) -> bool:
    """The literal is one side of a test whose other side picks the device from the
    process's rank (`f"cuda:{rank}" if mode == "ddp" else "cuda:0"`; `if ...: device =
    torch.device("cuda", local_rank)` / `else: device = "cuda:0"`): the test tells the
    job's processes from a run of one, and the literal's side may be the run of one. Not
    where the test reads a distributed flag the model follows (`if distributed and fast:`):
    where such a flag runs the literal is known (`ddplint.domain.runners.every_rank`)."""
    ranks = domain_of(ctx).ranks
    child: cst.CSTNode = literal
    for ancestor in ctx.ancestors(literal):
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Module)):
            return False
        if (
            isinstance(ancestor, (cst.IfExp, cst.If))
            and child is not ancestor.test
            and not _reads_flag(ancestor.test)
        ):
            other = ancestor.orelse if child is ancestor.body else ancestor.body
            if other is not None and _places_by_rank(ctx, ranks, other):
                return True
        child = ancestor
    return False


def _reads_flag(test: cst.BaseExpression) -> bool:
    """A term of `test` (split at `and`, `or`, `not`) reads a distributed flag or a count
    of processes (`ddplint.domain.switches.flag_reading`)."""
    return any(flag_reading(term) is not None for term, _ in logical_terms(test))


def _places_by_rank(ctx: FileContext, ranks: Ranks, branch: cst.CSTNode) -> bool:
    """Some device chosen in `branch` is computed from the process's rank: an index
    formatted into a device string, or what a device-taking call is handed."""
    chosen: list[cst.BaseExpression | None]
    for node in ctx.walk(branch):
        if type(node) is cst.Call:
            chosen = [device_string_index(a) or a for a in device_arguments(ctx, node)]
        elif isinstance(node, cst.BaseExpression):
            chosen = [device_string_index(node)]
        else:
            continue
        if any(
            index is not None
            and not isinstance(index, (cst.SimpleString, cst.Integer))
            and differs_by_rank(ranks, index, index)
            for index in chosen
        ):
            return True
    return False


def default_device_is_own(ctx: FileContext, use: cst.CSTNode) -> bool:
    """A use of the default CUDA device that is right for its process: it runs in one
    process (`runs_in_one_process`) or in a Ray actor on GPUs of its own, here or at every
    call of a function used only by calls (a few levels up: a helper that builds a
    single-process test's expected value), or makes a fake tensor (under
    `FakeTensorMode`) that takes no GPU memory."""

    def own(at: cst.CSTNode) -> bool:
        return runs_in_one_process(ctx, at) or on_own_gpus(ctx, at)

    if _fake_tensor(ctx, use) or own(use):
        return True
    func = ctx.enclosing_function(use)
    return (
        func is not None
        and not handed_on(ctx, func.name.value)
        and holds_at_every_call(ctx, use, own)
    )


def _fake_tensor(ctx: FileContext, node: cst.CSTNode) -> bool:
    for ancestor in ctx.ancestors(node):
        if type(ancestor) is cst.With and any(
            type(item.item) is cst.Call and (ctx.call_name(item.item) or "").endswith(_FAKE_MODE)
            for item in ancestor.items
        ):
            return True
    return False


def _in_per_rank_table(ctx: FileContext, literal: cst.CSTNode) -> bool:
    """`{0: ...device="cuda:0"..., 1: ...device="cuda:1"...}[rank]`: a table with one entry
    per rank, the device index equal to the key."""
    if type(literal) is cst.SimpleString:
        value = literal.evaluated_value
        index = value.rpartition(":")[2] if isinstance(value, str) else ""
    else:
        index = literal.value if type(literal) is cst.Integer else ""
    for ancestor in ctx.ancestors(literal):
        if type(ancestor) is cst.DictElement and type(ancestor.key) is cst.Integer:
            return ancestor.key.value == index
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
            return False
    return False


def _default_overridden_per_rank(ctx: FileContext, literal: cst.CSTNode) -> bool:
    """`device = torch.device("cuda:0" if cuda else "cpu")`, then later in the same scope
    `device = torch.device("cuda", LOCAL_RANK)` in DDP mode: the literal is only the
    single-process default (YOLO-style `select_device`)."""
    statement = None
    for ancestor in ctx.ancestors(literal):
        if type(ancestor) is cst.Assign:
            statement = ancestor
            break
        # only a device value: the literal, `torch.device(...)` of it, `x if c else y`
        if isinstance(ancestor, (cst.IfExp, cst.Arg)):
            continue
        if type(ancestor) is cst.Call and ctx.call_name(ancestor) == "torch.device":
            continue
        return False
    if statement is None or len(statement.targets) != 1:
        return False
    name = dotted(statement.targets[0].target)
    if name is None:
        return False
    scope = ctx.scope(statement)
    for binding in ctx.bindings.get(name, ()):
        if (
            binding.kind == "assign"
            and binding.scope is scope
            and binding.statement is not statement
            and ctx.before(statement, binding.statement)
            and not any(
                isinstance(n, cst.BaseExpression) and cuda_literal(n) is not None
                for n in ctx.walk(binding.value)
            )
            and any(
                LOCAL_RANK_NAME.match(n.rpartition(".")[2].lower())
                for n in ctx.names_in(binding.value)
            )
        ):
            return True
    return False
