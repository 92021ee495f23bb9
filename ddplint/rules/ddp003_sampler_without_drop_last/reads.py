"""Where a padded evaluation loader is read, and the collective that combines what was read.

A loader is held where it is built, and by the names its builder's callers of this file
bind it to (`train_loader, val_loader = build_loaders(args)`). It is read by a `for` over
one of those names, or over the parameter of a function of this file it is handed to; a
function of another module it is handed to reads it out of sight."""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from ddplint.context import FileContext, Scope
from ddplint.domain import domain_of
from ddplint.domain.samplers import LoaderUse, returned_bindings
from ddplint.names import dotted

# A loop variable holding the samples' dataset indices: what code uses to place or drop the
# repeated samples (`features.index_copy_(0, index_all, ...)`); not `enumerate`'s counter.
_INDEX_NAME = re.compile(r"(^|_)(idx|idxs|index|indices|indexes)$|^sample_ids?$")
_INDEX_KEY = re.compile(r"^(ids?|idx|index|indices|sample_ids?|uid)$")

# Collectives that combine per-rank results into one metric (barriers and broadcasts do not).
METRIC_COLLECTIVES = frozenset(
    f"torch.distributed.{name}"
    for name in (
        "all_reduce",
        "reduce",
        "all_gather",
        "all_gather_into_tensor",
        "all_gather_object",
        "gather",
        "gather_object",
    )
)

# Of those, the ones that keep each rank's results apart (one row per sample).
GATHERING_COLLECTIVES = METRIC_COLLECTIVES - frozenset(
    f"torch.distributed.{name}" for name in ("all_reduce", "reduce")
)


@dataclass(frozen=True)
class Reduction:
    """A call combining the results read from a padded loader across ranks. `gathered`:
    the ranks' results are kept per sample (`all_gather`); else summed into one value, or
    combined out of sight (a helper of another module)."""

    call: cst.Call
    gathered: bool


def reduction_of(ctx: FileContext, loader: LoaderUse) -> Reduction | None:
    """The first collective combining the results of a loop that reads `loader` (in sight),
    or a function of another module handed the loader that issues one."""
    for name, scope, after in _held(ctx, loader):
        for loop in _loops_over(ctx, scope, name):
            found = _metric_reduction(ctx, loop)
            if found is not None:
                return found
        for call in ctx.calls_within(scope):
            if not ctx.before(after, call) or not _hands(call, name):
                continue
            callees = ctx.resolver.callees(call)
            for func in callees:
                param = _parameter_for(func, call, name)
                for loop in _loops_over(ctx, func, param) if param else ():
                    found = _metric_reduction(ctx, loop)
                    if found is not None:
                        return found
            if not callees and _out_of_sight_reduction(ctx, call):
                return Reduction(call, gathered=False)
    return None


def _held(ctx: FileContext, loader: LoaderUse) -> list[tuple[str, Scope, cst.CSTNode]]:
    """(name, scope, from where) of each name holding the loader: its own, and those the
    callers of its builder bind to it."""
    scope = ctx.scope(loader.call)
    held: list[tuple[str, Scope, cst.CSTNode]] = []
    if loader.name is not None:
        held.append((loader.name, scope, loader.call))
    held.extend(
        (bound, where, call)
        for bound, where, call in returned_bindings(ctx, loader.name, scope, loader.call)
    )
    return held


def _hands(call: cst.Call, name: str) -> bool:
    return any(not arg.star and dotted(arg.value) == name for arg in call.args)


def _out_of_sight_reduction(ctx: FileContext, call: cst.Call) -> bool:
    """`call` runs a function of another module of the project that issues a collective."""
    collectives = domain_of(ctx).collectives
    return (
        not collectives.is_collective(call)
        and not ctx.resolver.callees(call)
        and collectives.issues(call)
    )


def _mentions(ctx: FileContext, expr: cst.CSTNode, name: str) -> bool:
    return any(
        isinstance(node, (cst.Name, cst.Attribute)) and dotted(node) == name
        for node in ctx.walk(expr)
    )


def _loops_over(ctx: FileContext, scope: cst.CSTNode, name: str) -> list[cst.For]:
    """The `for` loops of `scope`'s own body that iterate `name` (`for b in loader`,
    `enumerate(loader)`, `tqdm(loader)`)."""
    return [
        loop
        for loop in ctx.nodes_within(scope, cst.For)
        if type(loop) is cst.For and ctx.scope(loop) is scope and _mentions(ctx, loop.iter, name)
    ]


def _parameter_for(func: cst.FunctionDef, call: cst.Call, name: str) -> str | None:
    """The parameter of `func` that `call` passes `name` to."""
    params = [*func.params.posonly_params, *func.params.params]
    if params and params[0].name.value == "self" and type(call.func) is cst.Attribute:
        params = params[1:]
    for index, arg in enumerate(call.args):
        if arg.star or dotted(arg.value) != name:
            continue
        if arg.keyword is not None:
            return arg.keyword.value
        if index < len(params):
            return params[index].name.value
    return None


def _reads_indices(ctx: FileContext, loop: cst.For) -> bool:
    """The loop binds each sample's dataset index (`for x, index in loader`; in its body
    `idx, x = batch` or `batch["id"]`); the counter of `enumerate(loader)` is not one."""
    parts: list[cst.CSTNode] = [loop.target]
    target = loop.target
    if (
        type(loop.iter) is cst.Call
        and dotted(loop.iter.func) == "enumerate"
        and isinstance(target, (cst.Tuple, cst.List))
    ):
        parts = [element.value for element in target.elements[1:]]
    bound = {n.value for part in parts for n in ctx.walk(part) if type(n) is cst.Name}
    for node in ctx.nodes_within(loop.body, cst.Assign, cst.Subscript):
        # `idx, images, _ = batch` (or `[t.cuda() for t in batch]`) unpacks what the loop binds
        if type(node) is cst.Assign and _unpacked(node.value) in bound:
            parts.extend(t.target for t in node.targets)
        # `batch["id"]` reads it by key
        if type(node) is cst.Subscript and dotted(node.value) in bound and _index_key(node):
            return True
    return any(
        type(n) is cst.Name and _INDEX_NAME.search(n.value)
        for part in parts
        for n in ctx.walk(part)
    )


def _unpacked(value: cst.BaseExpression) -> str | None:
    """The name an assignment's value unpacks: itself (`batch`), or what a comprehension
    over it iterates (`[t.cuda() for t in batch]`, one result per part)."""
    if isinstance(value, (cst.ListComp, cst.GeneratorExp)) and value.for_in.inner_for_in is None:
        return dotted(value.for_in.iter)
    return dotted(value)


def _index_key(node: cst.Subscript) -> bool:
    """`batch["id"]`, `data["index"]`: a string key naming the sample's index."""
    if len(node.slice) != 1 or type(node.slice[0].slice) is not cst.Index:
        return False
    key = node.slice[0].slice.value
    text = key.evaluated_value if type(key) is cst.SimpleString else None
    return isinstance(text, str) and _INDEX_KEY.match(text) is not None


def _loop_results(ctx: FileContext, loop: cst.For) -> set[str]:
    """Names the loop's body binds or updates (`correct += ...`, `preds.append(...)`,
    `top1.update(...)`): where its results are held."""
    names: set[str] = set()
    for node in ctx.nodes_within(loop.body, cst.Assign, cst.AugAssign, cst.Call):
        if type(node) is cst.Assign:
            for target in node.targets:
                names.update(n for t in ctx.walk(target.target) if (n := _base(t)) is not None)
        elif type(node) is cst.AugAssign:
            names.update(n for n in [_base(node.target)] if n is not None)
        elif type(node) is cst.Call and type(node.func) is cst.Attribute:
            names.update(n for n in [_base(node.func.value)] if n is not None)
    return names


def _base(node: cst.CSTNode) -> str | None:
    return node.value if type(node) is cst.Name else None


def _metric_reduction(ctx: FileContext, loop: cst.For) -> Reduction | None:
    """A collective combining results across ranks in the loop or after it, in its
    function, unless the function cuts the gathered results to the dataset's length
    (`[: len(dataset)]`) or the loop reads the samples' indices (`for x, index in
    loader`): either removes the padding. A function of another module issuing a
    collective counts when it is handed what the loop computed."""
    if _reads_indices(ctx, loop):
        return None
    if any(
        type(c.func) is cst.Attribute and c.func.attr.value == "backward"
        for c in ctx.calls_within(loop)
    ):
        return None  # a training loop: its reductions are for logging
    scope = ctx.scope(loop)
    collectives = domain_of(ctx).collectives
    results: set[str] | None = None
    found = None
    for call in ctx.calls_within(scope):
        if ctx.before(call, loop) or found is not None:
            continue
        inner = collectives.through(call) or call
        qualname = collectives.qualname(inner)
        if qualname in METRIC_COLLECTIVES:
            found = Reduction(call, gathered=qualname in GATHERING_COLLECTIVES)
        elif _out_of_sight_reduction(ctx, call):
            results = _loop_results(ctx, loop) if results is None else results
            if any(n.partition(".")[0] in results for a in call.args for n in ctx.names_in(a)):
                found = Reduction(call, gathered=False)
    if found is None or _cuts_to_length(ctx, scope) or _counts_each_sample_once(ctx, loop):
        return None
    return found


def _cuts_to_length(ctx: FileContext, scope: cst.CSTNode) -> bool:
    """A slice of the function ends at a length (`[: len(dataset)]`), written there or
    held by the bound's name (`len_ds = len(train_set)` in a caller that passes it)."""
    for node in ctx.nodes_within(scope, cst.Slice):
        assert type(node) is cst.Slice
        upper = node.upper
        if upper is None:
            continue
        bounds = [upper, *(v.expr for v in ctx.resolver.values(upper, node))]
        if any(_holds_length(ctx, bound) for bound in bounds):
            return True
    return False


def _counts_each_sample_once(ctx: FileContext, loop: cst.For) -> bool:
    """After the loop, its function tests the length of what the loop collected against
    the length of something it did not collect, for equality (`assert len(kept) ==
    len(dataset)`), not against a sampler's padded length: repeated samples would fail it,
    so the results hold each sample once."""
    results = _loop_results(ctx, loop)
    for node in ctx.nodes_within(ctx.scope(loop), cst.Comparison):
        assert type(node) is cst.Comparison
        if ctx.is_inside(node, loop) or not ctx.before(loop, node):
            continue
        if len(node.comparisons) != 1 or type(node.comparisons[0].operator) is not cst.Equal:
            continue
        sides = [_length_of(node.left), _length_of(node.comparisons[0].comparator)]
        if None in sides or any("sampler" in ctx.code(side) for side in sides if side):
            continue
        collected = [_base(side) in results for side in sides if side is not None]
        if collected.count(True) == 1:
            return True
    return False


def _length_of(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """`x` of `len(x)`."""
    if type(expr) is cst.Call and dotted(expr.func) == "len" and len(expr.args) == 1:
        return expr.args[0].value
    return None


def _holds_length(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    return any(type(n) is cst.Call and dotted(n.func) == "len" for n in ctx.walk(expr))
