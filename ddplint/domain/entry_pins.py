"""What a script pins before it starts its job: a test its entry checks and stops on
otherwise (`assert not args.distributed`, `assert args.num_gpus == 1`, `if args.num_gpus
!= 1: raise NotImplementedError(...)`), in the `__main__` block or in a function of the file
that block calls, before the statement that starts the job. Whatever the script runs
afterwards runs where the test holds.

A script pins itself to one process when a pinned test says the job is not distributed
(`Ranks.single_process_when`: `world_size == 1`, `not args.distributed`), or pins to 1 every
value the file sizes its job by: the `WORLD_SIZE` it sets, a process group's `world_size=`,
a spawn's `nprocs`, the count of a loop starting `Process`es (`os.environ["WORLD_SIZE"] =
str(args.num_gpus)`). A value is known by its spelling (`args.num_gpus`), as the options
travel from the entry into the workers."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain import domain_of
from ddplint.domain.apis import PROCESS_CLASSES, SPAWN_FUNCTIONS
from ddplint.domain.ddp_facts import keyword
from ddplint.domain.one_rank_groups import is_one, sets_world_size
from ddplint.domain.ranks import strip_conversion
from ddplint.domain.scripts import main_blocks
from ddplint.engine.flow import fixed_terms, statements
from ddplint.engine.resolve import argument

_GROUP_STARTS = frozenset({"torch.distributed.init_process_group"})

StartsJob = Callable[[cst.CSTNode], bool]


def pins_one_process(ctx: FileContext, starts: StartsJob) -> bool:
    """The script stops unless its job is one process (see the module docstring);
    `starts` tells the statement that starts the job, where pinning ends."""
    pinned = list(_pins(ctx, starts))
    if not pinned:  # most files: no entry, or an entry that tests nothing
        return False
    ranks = domain_of(ctx).ranks
    if any(ranks.single_process_when(term) is holds for term, holds in pinned):
        return True
    ones = {text for term, holds in pinned if (text := _pinned_to_one(ctx, term, holds))}
    if not ones:
        return False
    sizes = list(_job_sizes(ctx))
    return bool(sizes) and all(is_one(s) or ctx.code(s) in ones for s in sizes)


def _pins(ctx: FileContext, starts: StartsJob) -> Iterator[tuple[cst.BaseExpression, bool]]:
    """The terms the entry fixes, each with the value it must have to go on."""
    for block in main_blocks(ctx.module):
        yield from _pins_in(ctx, statements(block.body), starts, depth=2)


def _pins_in(
    ctx: FileContext, body: Sequence[cst.CSTNode], starts: StartsJob, depth: int
) -> Iterator[tuple[cst.BaseExpression, bool]]:
    """Pins of `body` up to the statement that starts the job, with those of the
    functions of the file it calls as statements on the way (`main()`), `depth` levels
    down."""
    for statement in body:
        callee = _called_function(ctx, statement)
        if callee is not None and depth > 1:
            yield from _pins_in(ctx, statements(callee.body), starts, depth - 1)
        if starts(statement):
            return
        if type(statement) is cst.SimpleStatementLine:
            for small in statement.body:
                if type(small) is cst.Assert:
                    yield from fixed_terms(small.test, True)
        elif (
            type(statement) is cst.If
            and statement.orelse is None
            and ctx.flow.leaves(statement.body, stops_only=True)
        ):
            yield from fixed_terms(statement.test, False)


def _called_function(ctx: FileContext, statement: cst.CSTNode) -> cst.FunctionDef | None:
    """The function of this file a statement `f(...)` calls, if it is one."""
    if type(statement) is not cst.SimpleStatementLine or len(statement.body) != 1:
        return None
    expr = statement.body[0]
    call = expr.value if type(expr) is cst.Expr else None
    if type(call) is not cst.Call or type(call.func) is not cst.Name:
        return None
    defs = ctx.functions.get(call.func.value, ())
    return defs[0] if len(defs) == 1 else None


def _pinned_to_one(ctx: FileContext, term: cst.BaseExpression, holds: bool) -> str | None:
    """The spelling of the value `term == holds` makes 1 (`n == 1` holding, `n != 1`
    failing)."""
    if type(term) is not cst.Comparison or len(term.comparisons) != 1:
        return None
    target = term.comparisons[0]
    equal = {cst.Equal: True, cst.NotEqual: False}.get(type(target.operator))
    if equal is None or equal is not holds:
        return None
    if is_one(target.comparator):
        return ctx.code(term.left)
    return ctx.code(target.comparator) if is_one(term.left) else None


def _job_sizes(ctx: FileContext) -> Iterator[cst.BaseExpression]:
    """Every value the file sizes its job by (see the module docstring)."""
    for node in ctx.nodes_of(cst.Assign):
        assert type(node) is cst.Assign
        if sets_world_size(ctx, node):
            yield strip_conversion(node.value, ("str",))
    for call in ctx.calls:
        name = ctx.call_name(call)
        size = keyword(call, "world_size") if name in _GROUP_STARTS else None
        if size is not None:
            yield strip_conversion(size.value, ("str",))
        count = argument(call, 2, "nprocs") if name in SPAWN_FUNCTIONS else None
        if count is not None:
            yield count
    for loop in ctx.nodes_of(cst.For):
        assert type(loop) is cst.For
        count = _range_count(loop.iter)
        if count is not None and any(
            type(c) is cst.Call and ctx.call_name(c) in PROCESS_CLASSES for c in ctx.walk(loop)
        ):
            yield count


def _range_count(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """`n` of `range(n)`."""
    if type(expr) is cst.Call and type(expr.func) is cst.Name and expr.func.value == "range":
        return expr.args[0].value if len(expr.args) == 1 else None
    return None
